import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dispatcherCommand, serviceNodeFlags } from '../../bench/servers';

// npm run bench runs the service (and the baseline) with the service image's node flags.
describe('bench: the service runs as the Dockerfile runs it', () => {
  test("the flags are the Dockerfile CMD's, between node and the script", () => {
    expect(serviceNodeFlags(readFileSync(path.join(__dirname, '..', '..', 'Dockerfile'), 'utf8'))).toEqual([
      '--max-semi-space-size=4',
      '--heap-growing-percent=50',
    ]);
    expect(serviceNodeFlags('FROM x\nCMD ["node", "--a", "--b=1", "dist/service/server.js"]\n')).toEqual([
      '--a',
      '--b=1',
    ]);
    expect(serviceNodeFlags('CMD ["node", "dist/service/server.js"]')).toEqual([]);
  });

  test('a CMD that does not start the service is refused rather than benchmarked with no flags', () => {
    expect(() => serviceNodeFlags('CMD ["npm", "start"]')).toThrow(/CMD is not/);
    expect(() => serviceNodeFlags('FROM x\n')).toThrow(/CMD is not/);
  });
});

// bench W runs the dispatcher with compose's command for it, whatever the service image's CMD says.
describe('bench: the webhook dispatcher runs as compose runs it', () => {
  test("the launcher, node flags and script are those of compose's webhook-dispatcher command", () => {
    expect(dispatcherCommand(readFileSync(path.join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8'))).toEqual({
      launcher: ['chrt', '--idle', '0'],
      nodeFlags: [],
      script: expect.stringMatching(/^dist\/.*main\.js$/) as string,
    });
    expect(
      dispatcherCommand(
        'services:\n  webhook-dispatcher:\n    command: ["node", "--x=1", "dist/dispatcher/main.js"]\n',
      ),
    ).toEqual({ launcher: [], nodeFlags: ['--x=1'], script: 'dist/dispatcher/main.js' });
  });

  test('a command that does not start the dispatcher is refused', () => {
    expect(() =>
      dispatcherCommand('services:\n  webhook-dispatcher:\n    command: ["npm", "run", "dispatcher"]\n'),
    ).toThrow(/command is not/);
    expect(() => dispatcherCommand('services: {}\n')).toThrow(/command is not/);
  });

  // The image's user is not root: the switch to SCHED_IDLE needs no privilege, and node's threads inherit it.
  test("compose's launcher runs node under SCHED_IDLE, as an unprivileged user too", () => {
    const { launcher } = dispatcherCommand(
      readFileSync(path.join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8'),
    );
    const script =
      "const fs = require('node:fs'); console.log(fs.readdirSync('/proc/self/task').map((t) => fs.readFileSync(`/proc/self/task/${t}/sched`, 'utf8').match(/^policy\\s*:\\s*(\\d+)/m)[1]).join(','))";
    const asUser = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
    const argv = [...asUser, ...launcher, process.execPath, '-e', script];
    const policies = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).trim().split(',');
    expect(policies.length).toBeGreaterThan(1);
    expect(new Set(policies)).toEqual(new Set(['5'])); // SCHED_IDLE
  });
});
