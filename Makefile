# backoffice-api: every task a developer or CI runs. `make run` and `make test` do their own set-up.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true
BIN := node_modules/.bin
# Redocly prints a boxed Node.js deprecation notice on every run; keep the output readable.
QUIET_BOX := grep -v -e '║' -e '╔' -e '╚' -e '^\s*$$' || true
# The key styles of x-api-inflection besides snake (the default): each has its own bundle, types and docs page.
OTHER_STYLES := camel dash pascal
STYLE ?= snake

.PHONY: bench help install generate lint docs web mock migrate run build test system-deps fuzz soak client contract-release

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# Every build below is a file with its real inputs as prerequisites: `make run` with nothing changed
# builds nothing (a restart in a few seconds), and one changed file rebuilds only what comes from it.
install: node_modules/.installed ## Install the npm dependencies (npm ci), when package.json or the lock file changed
node_modules/.installed: package.json package-lock.json
	@scripts/install.sh

generate: install ## Bundle openapi/, derive it in every key style, regenerate generated/ (commit the result)
	scripts/generate.sh
	node --import tsx scripts/client-contract.ts

contract-release: install ## Record generated/openapi.json as the released contract (openapi/released/) and its section of docs/CONTRACT-CHANGELOG.md; refused on a breaking change without a new major
	node --import tsx scripts/contract-diff.ts --release

client: install ## The partners' TypeScript client (clients/typescript/): its contract copied from generated/, built, packed into dist/clients/
	node --import tsx scripts/client-contract.ts
	@mkdir -p dist/clients
	cd clients/typescript && npm pack --silent --pack-destination ../../dist/clients

lint: install ## Contract lint (Redocly, every key style; Spectral's OWASP rules; zero findings), generated/ drift, tsc, eslint
	@out=$$($(BIN)/redocly lint 2>&1); status=$$?; echo "$$out" | $(QUIET_BOX); \
	  if [ $$status -ne 0 ] || echo "$$out" | grep -v '║' | grep -qiE '[0-9]+ warnings?'; then echo "redocly lint: not clean" >&2; exit 1; fi
	scripts/check-generated.sh
	node --import tsx scripts/client-contract.ts --check
	$(BIN)/spectral lint generated/openapi.json --fail-severity hint --quiet
	$(BIN)/tsc --noEmit
	$(BIN)/tsc -p web/tsconfig.json
	$(BIN)/eslint .

build: install dist/.built ## Compile TypeScript into dist/ (when a source changed)
BUILD_SOURCES := $(shell find src generated -type f -name '*.ts') tsconfig.json tsconfig.build.json
dist/.built: $(BUILD_SOURCES) node_modules/.installed
	$(BIN)/tsc -p tsconfig.build.json
	@touch $@

docs: install dist/docs/.built ## Render the Redoc reference, one page per key style, everything inlined, into dist/docs/ (when the contract changed)
dist/docs/.built: generated/openapi.json $(OTHER_STYLES:%=generated/openapi.%.json) scripts/docs-stand-in.ts node_modules/.installed
	@mkdir -p dist/docs
	@$(BIN)/redocly build-docs generated/openapi.json --inlineBundle --title 'Back-office API reference' -o dist/docs/index.html 2>&1 | $(QUIET_BOX)
	@for style in $(OTHER_STYLES); do \
	  $(BIN)/redocly build-docs generated/openapi.$$style.json --inlineBundle --title "Back-office API reference ($$style)" -o dist/docs/index.$$style.html 2>&1 | $(QUIET_BOX); \
	done
	@node --import tsx scripts/docs-stand-in.ts dist/docs/*.html
	@touch $@

web: install web/dist/index.html ## Build the back-office interface (web/) into web/dist/, served at /
WEB_SOURCES := $(shell find web/src -type f) web/index.html web/vite.config.ts web/tsconfig.json generated/openapi.d.ts generated/openapi.json
web/dist/index.html: $(WEB_SOURCES) node_modules/.installed
	$(BIN)/vite build web --logLevel warn

# The mock's port: `make mock PORT=4011`. Only a PORT given on make's command line counts: a PORT
# in the environment is the service's own (README.md, configuration).
MOCK_PORT ?= $(if $(filter command line,$(origin PORT)),$(PORT),4010)
mock: install ## Serve the contract's examples with Prism on http://localhost:4010 (PORT=...), in the style x-api-inflection asks for (STYLE: without it)
	scripts/mock.sh $(STYLE) $(MOCK_PORT)

migrate: build ## Apply database migrations (DATABASE_URL, or the embedded database)
	node dist/src/cli/main.js migrate

run: build docs web ## Run the service on http://localhost:3000 (embedded database unless DATABASE_URL is set)
	npm start --silent

system-deps: ## Install the Debian packages the tests need, if missing (PostgreSQL 15 server, nginx, PgBouncer, Chromium)
	scripts/system-deps.sh

test: install system-deps docs web ## Run every test against a throwaway PostgreSQL 15 cluster
	$(BIN)/vitest run

bench: build ## Run the benchmarks of docs/BENCHMARKS.md (installs wrk if missing; about 30 minutes, plus seeding a million meetings and a million tasks)
	scripts/system-deps.sh bench
	node --import tsx bench/sign-in.ts 10
	node --import tsx bench/sign-in-notice.ts
	node --import tsx bench/users-list.ts
	node --import tsx bench/process-spread.ts
	node --import tsx bench/refresh.ts
	node --import tsx bench/scale-out.ts
	node --import tsx bench/metrics-cost.ts
	node --import tsx bench/access-line.ts
	node --import tsx bench/statements.ts
	node --import tsx bench/row-shapes.ts
	node --import tsx bench/bearer-parts.ts
	BENCH_SHAPE=production node --import tsx bench/bearer-parts.ts
	node --import tsx bench/allocation.ts
	node --import tsx bench/idempotency.ts
	node --import tsx bench/rate-limited-key.ts
	node --import tsx bench/key-revocation.ts
	node --import tsx bench/usage-limited-key.ts
	node --import tsx bench/webhooks.ts
	node --import tsx bench/mail-send.ts
	node --import tsx bench/profile.ts users-key
	node --import tsx bench/profile.ts users-key floor
	node --import tsx bench/audit-verify.ts
	node --import tsx bench/audit-insert.ts
	node --import tsx bench/meetings-week.ts
	BENCH_MEETINGS=100000 node --import tsx bench/database-work.ts
	node --import tsx bench/tasks-list.ts

fuzz: install system-deps ## Fuzz every operation of the contract longer than make test does (FUZZ_REQUESTS, FUZZ_SEED)
	FUZZ_REQUESTS=$${FUZZ_REQUESTS:-100000} $(BIN)/vitest run test/fuzz.test.ts

soak: install system-deps ## Mixed traffic against real PostgreSQL for SOAK_DURATION_S (default 600 s): errors, latency, memory
	SOAK_DURATION_S=$${SOAK_DURATION_S:-600} node --import tsx bench/soak.ts
