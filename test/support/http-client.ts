// A small HTTP client for tests that send many requests: keep-alive connections, raw bodies and
// headers exactly as given (no encoding done for us), and an answer shaped like supertest's, so
// expectContractResponse() can check it.
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export class HttpClient {
  readonly agent: http.Agent;

  constructor(
    readonly baseUrl: string,
    maxSockets = 16,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  send(req: RawRequest, options: { timeoutMs?: number; localAddress?: string } = {}): Promise<RawResponse> {
    const url = new URL(req.path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const outgoing = http.request(
        url,
        {
          method: req.method,
          headers: { ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}), ...req.headers },
          agent: this.agent,
          ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
          });
        },
      );
      if (options.timeoutMs) outgoing.setTimeout(options.timeoutMs, () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
