/**
 * A partner's webhook receiver, run inside its own network namespace by receivers.ts: answers
 * each POST as its mode says and prints one JSON line per request (headers, raw body, status
 * answered, path, and how many requests were in flight at once), so the test verifies every delivery.
 * Modes (argv[3]): ok, fail=<ratio>, failfirst=<n>, status=<code>, redirect=<url>, hang, huge, slow=<ms>.
 */
import http from 'node:http';

const [port, mode = 'ok'] = process.argv.slice(2);
let inFlight = 0;
let seen = 0;

http
  .createServer((req, res) => {
    inFlight += 1;
    const concurrent = inFlight;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
        inFlight -= 1;
        process.stdout.write(
          `${JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status, concurrent, path: req.url })}\n`,
        );
        res.writeHead(status, headers).end(body);
      };
      const [name, value] = mode.split('=');
      seen += 1;
      if (name === 'failfirst') return answer(seen <= Number(value) ? 500 : 204);
      if (name === 'fail') return answer(Math.random() < Number(value) ? 500 : 204);
      if (name === 'status') return answer(Number(value));
      if (name === 'redirect') return answer(302, { Location: value! });
      if (name === 'huge') return answer(200, {}, 'x'.repeat(1024 * 1024));
      if (name === 'slow') return void setTimeout(() => answer(204), Number(value));
      if (name === 'hang') return; // never answers
      answer(204);
    });
  })
  .listen(Number(port), '0.0.0.0', () => process.stdout.write('{"listening":true}\n'));
