import { newRequestId } from '../../gateway/local/server';

// nginx's $request_id (Kong's X-Kong-Request-Id): 16 random bytes in hex, new for every request.
describe('local gateway request ids', () => {
  it('are 32 lowercase hex characters and never repeat, across refills of the random pool', () => {
    const ids = Array.from({ length: 1000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
