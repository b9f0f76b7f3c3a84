import { isDatabaseUnavailable } from '../../db/errors';

// The shapes mysql2 gives (lib/base/connection.js, lib/packets/packet.js), as drizzle wraps them.
const closedState = () =>
  Object.assign(new Error("Can't add new command when connection is in closed state"), { fatal: true });
const serverSaid = (code: string, errno: number, sqlState: string) =>
  Object.assign(new Error(code), { code, errno, sqlState, fatal: true });
const wrapped = (cause: Error) => Object.assign(new Error('Failed query: select 1'), { cause });

describe('which database errors mean "unavailable, retry later"', () => {
  test('a lost link the driver gives no code for is unavailable, wrapped or not', () => {
    expect(isDatabaseUnavailable(closedState())).toBe(true);
    expect(isDatabaseUnavailable(wrapped(closedState()))).toBe(true);
  });

  test("a fatal error the server itself answered is not a lost link (a wrong password is the operator's to fix)", () => {
    expect(isDatabaseUnavailable(serverSaid('ER_ACCESS_DENIED_ERROR', 1045, '28000'))).toBe(false);
  });

  test('a statement the server refused is not unavailability', () => {
    expect(
      isDatabaseUnavailable(
        wrapped(Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY', errno: 1062, sqlState: '23000' })),
      ),
    ).toBe(false);
    expect(isDatabaseUnavailable(new Error('a bug'))).toBe(false);
  });

  test('the named link failures stay unavailable', () => {
    expect(
      isDatabaseUnavailable(
        wrapped(Object.assign(new Error('lost'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true })),
      ),
    ).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('reset'), { code: 'ECONNRESET', errno: -104 }))).toBe(true);
  });
});
