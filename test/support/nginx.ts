// nginx from Debian's packages as the load balancer in front of several server processes: started
// by the test on loopback, with its own configuration, prefix and logs in a temporary folder.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listensOn, onAFreePort, PortTaken } from './server-process.js';

const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

export interface LoadBalancer {
  url: string;
  /** The access log: one line per request, `client upstream status request_id nginx's_request_id`. */
  accessLog(): { client: string; upstream: string; status: number; requestId: string; proxyRequestId: string }[];
  stop(): Promise<void>;
}

export function startNginx(upstreams: number[]): Promise<LoadBalancer> {
  if (!existsSync(NGINX)) throw new Error(`nginx not found at ${NGINX}: run 'make system-deps'`);
  return onAFreePort((port) => startOn(port, upstreams));
}

async function startOn(port: number, upstreams: number[]): Promise<LoadBalancer> {
  const dir = mkdtempSync(join(tmpdir(), 'backoffice-nginx-'));
  chmodSync(dir, 0o777);
  const runAsRoot = process.getuid?.() === 0 ? 'user root;' : '';
  const config = `
${runAsRoot}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  # The id the service answered, and the one nginx made and sent it ($request_id).
  log_format balanced '$remote_addr $upstream_addr $status $upstream_http_x_request_id $request_id';
  access_log ${dir}/access.log balanced;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream backoffice {
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 1m;
    location / {
      proxy_pass http://backoffice;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # The request id, made here: a client's own X-Request-Id must not pass (TRUST_PROXY trusts this one).
      proxy_set_header X-Request-Id $request_id;
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), config);
  const check = spawnSync(NGINX, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`nginx -t failed: ${check.stderr}`);
  const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Up when it answers and holds the port: nginx retries a bind for a few seconds before it gives
  // up, while whatever took the port answers in its place.
  for (let i = 0; ; i++) {
    const answered = await fetch(`${url}/livez`).then(
      () => true,
      () => false,
    );
    if (answered && listensOn(child.pid!, port)) break;
    if (i > 200 || child.exitCode !== null) {
      const log = readFileSync(join(dir, 'error.log'), 'utf8');
      if (log.includes('Address already in use')) {
        if (child.exitCode === null) child.kill('SIGKILL');
        throw new PortTaken(log);
      }
      throw new Error(`nginx did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    accessLog: () =>
      readFileSync(join(dir, 'access.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [client, upstream, status, requestId, proxyRequestId] = line.split(' ');
          return { client: client!, upstream: upstream!, status: Number(status), requestId: requestId!, proxyRequestId: proxyRequestId! };
        }),
    async stop() {
      child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
