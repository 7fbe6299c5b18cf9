// What the access line costs, where it is spent: the line of one GET as pino writes it
// (`accessLog.info(fields, msg)`) and as the service writes it (src/logger.ts fixedShapeLines, from
// the request's summary built as text), into the service's own destination (bufferedStdout's
// sonic-boom settings) on /dev/null. Each round runs both, in turn, a million lines each; median
// CPU ns per line over the rounds and the median of the rounds' ratios. The lines are checked alike
// first (the time aside).
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createLogger, fixedShapeLines } from '../src/logger.js';
import { median, print } from './support/measure.js';

const LINES = Number(process.env.BENCH_LINES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

// As bufferedStdout makes standard output's stream (src/logger.ts), on /dev/null.
const destination = pino.destination({ dest: '/dev/null', sync: true, minLength: 3072, maxWrite: 4096 });
const accessLog = createLogger('info', destination).child({}, { redact: [] });
const writeLine = fixedShapeLines(accessLog);

const ids = Array.from({ length: 1024 }, () => randomUUID());
/** A GET's summary, as src/http/request-context.ts makes it: the object pino stringifies, and the same as text. */
const summary = (i: number) => ({ id: ids[i & 1023]!, clientRequestId: undefined, method: 'GET', path: '/users', remoteAddress: '127.0.0.1', ip: '127.0.0.1' });
const json = JSON.stringify;
/** The same as text, field by field, as src/http/request-context.ts's summaryJson builds it (no object in between; a copy of its fields here, as the line's own is made from a request). */
const summaryText = (i: number) => `{"id":${json(ids[i & 1023])},"method":${json('GET')},"path":${json('/users')},"remoteAddress":${json('127.0.0.1')},"ip":${json('127.0.0.1')}}`;

const byPino = (i: number) => accessLog.info({ req: summary(i), res: { statusCode: 200 }, responseTime: i % 40 }, 'request completed');
const asText = (i: number) => writeLine(30, `,"req":${summaryText(i)},"res":{"statusCode":200},"responseTime":${i % 40}`, 'request completed');

// The same line both ways, first (the time cut out: the two are written a moment apart).
const captured: string[] = [];
const capturingLog = createLogger('info', { write: (line: string) => void captured.push(line.replace(/"time":"[^"]+"/, '"time":""')) }).child({}, { redact: [] });
capturingLog.info({ req: summary(7), res: { statusCode: 200 }, responseTime: 7 }, 'request completed');
fixedShapeLines(capturingLog)(30, `,"req":${summaryText(7)},"res":{"statusCode":200},"responseTime":7`, 'request completed');
if (captured.length !== 2 || captured[0] !== captured[1]) throw new Error(`the two lines differ:\n${captured.join('')}`);

/** CPU ns per line of `write`, over LINES lines (CPU time: the wall clock also counts other processes' turns). */
function perLine(write: (i: number) => void): number {
  const started = process.cpuUsage();
  for (let i = 0; i < LINES; i++) write(i);
  const used = process.cpuUsage(started);
  return ((used.user + used.system) * 1e3) / LINES;
}

const loadBefore = loadavg()[0]!;
const rounds = Array.from({ length: ROUNDS }, (_, round) => {
  // Each round takes them in the other order than the one before.
  const [first, second] = round % 2 === 0 ? [byPino, asText] : [asText, byPino];
  const a = perLine(first);
  const b = perLine(second);
  return round % 2 === 0 ? { pino: a, text: b } : { pino: b, text: a };
});
destination.flushSync();
const pinoNs = median(rounds.map((r) => r.pino));
const textNs = median(rounds.map((r) => r.text));
const ratio = median(rounds.map((r) => r.text / r.pino));
print(
  `an access line: pino ${pinoNs.toFixed(0)} ns, as text ${textNs.toFixed(0)} ns, ${(ratio * 100).toFixed(0)} % of pino's (round by round: ${rounds.map((r) => `${r.pino.toFixed(0)}/${r.text.toFixed(0)}`).join(' ')}; CPU time, median of ${ROUNDS} rounds of ${LINES} lines each; load ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after)`,
);
