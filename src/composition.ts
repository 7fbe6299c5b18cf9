// The composition root: every service built once (the platform's, src/services.ts, then each
// feature's own `services`, src/features.ts) and the handler map gathered from every feature. The
// compiler checks that the features together serve every operation of the contract.
import type { Dependencies } from './dependencies.js';
import type { HandlerMap } from './http/handler-types.js';
import { buildPlatform, type PlatformServices } from './services.js';
import * as features from './features.js';

type Features = typeof features;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type OwnServices<F> = F extends { services: (deps: Dependencies) => infer S } ? S : never;
/** What the features build themselves (their `services`, src/features.ts). */
export type FeatureServices = UnionToIntersection<OwnServices<Features[keyof Features]>>;

export type Services = PlatformServices & FeatureServices;

/** Every service, built once: the platform's, then each feature's own. */
export function buildServices(deps: Dependencies): Services {
  const built: Record<string, unknown> = { ...buildPlatform(deps) };
  for (const feature of Object.values(features)) if ('services' in feature) Object.assign(built, feature.services(deps));
  return built as unknown as Services;
}

type Served = UnionToIntersection<ReturnType<Features[keyof Features]['handlers']>>;

export function createHandlers(services: Services): HandlerMap {
  const served: Served = Object.assign({}, ...Object.values(features).map((feature) => feature.handlers(services)));
  return served;
}
