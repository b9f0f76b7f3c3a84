import type { Database } from '../db/client';
import { leasesHeld, type Lease } from '../db/webhooks/delivery';

export interface LeaseGate {
  /** Resolves true when a read begun after this call finds the lease still held as claimed. */
  check(lease: Lease): Promise<boolean>;
}

/**
 * The check before every send, shared: the walks asking while one read is out go together in the next,
 * so an owner's rotate, replay or disable stops the next send in every process for one indexed read per batch.
 */
export function leaseGate(db: Database): LeaseGate {
  let queue: Array<{ lease: Lease; resolve: (held: boolean) => void; reject: (error: unknown) => void }> = [];
  let reading = false;

  async function read(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        const held = await leasesHeld(
          db,
          batch.map((one) => one.lease),
        );
        for (const one of batch) one.resolve(held.has(one.lease.id));
      } catch (error) {
        for (const one of batch) one.reject(error);
      }
    }
    reading = false;
  }

  return {
    check(lease) {
      return new Promise((resolve, reject) => {
        queue.push({ lease, resolve, reject });
        if (!reading) {
          reading = true;
          // The walks woken by the same answer or tick join this read.
          setImmediate(() => void read());
        }
      });
    },
  };
}
