import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dispatcherNodeFlags, serviceNodeFlags } from '../bench/servers';

// npm run bench runs the service (and the baseline) with the service image's node flags.
describe('bench: the service runs as the Dockerfile runs it', () => {
  test("the flags are the Dockerfile CMD's, between node and the script", () => {
    expect(serviceNodeFlags(readFileSync(path.join(__dirname, '..', 'Dockerfile'), 'utf8'))).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=50']);
    expect(serviceNodeFlags('FROM x\nCMD ["node", "--a", "--b=1", "dist/service/server.js"]\n')).toEqual(['--a', '--b=1']);
    expect(serviceNodeFlags('CMD ["node", "dist/service/server.js"]')).toEqual([]);
  });

  test('a CMD that does not start the service is refused rather than benchmarked with no flags', () => {
    expect(() => serviceNodeFlags('CMD ["npm", "start"]')).toThrow(/CMD is not/);
    expect(() => serviceNodeFlags('FROM x\n')).toThrow(/CMD is not/);
  });
});

// bench W runs the dispatcher with compose's command for it, whatever the service image's CMD says.
describe('bench: the webhook dispatcher runs as compose runs it', () => {
  test("the flags are those of compose's webhook-dispatcher command", () => {
    expect(dispatcherNodeFlags(readFileSync(path.join(__dirname, '..', 'docker-compose.yml'), 'utf8'))).toEqual([]);
    expect(dispatcherNodeFlags('services:\n  webhook-dispatcher:\n    command: ["node", "--x=1", "dist/service/webhooks/main.js"]\n')).toEqual(['--x=1']);
  });

  test('a command that does not start the dispatcher is refused', () => {
    expect(() => dispatcherNodeFlags('services:\n  webhook-dispatcher:\n    command: ["npm", "run", "dispatcher"]\n')).toThrow(/command is not/);
    expect(() => dispatcherNodeFlags('services: {}\n')).toThrow(/command is not/);
  });
});
