// CLUSTER=1: keys live in the shared PostgreSQL, and every node resolves keys from memory (http/accounts.ts). A
// node that makes or revokes a key says so on `<prefix>.keys` (core NATS); the others adopt the key from the
// database by its hash, or drop it. A node started later loads every key at start. A message lost while a node
// was disconnected leaves that node without the key until it restarts (it is never wrongly given one: a revoked
// key is refused by the node that revoked it and by any node that got the message).

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Accounts } from './accounts.js';

export class KeySync {
  private sub: Subscription | null = null;
  private loop: Promise<void> = Promise.resolve();
  private readonly origin: string;

  constructor(private readonly nc: NatsConnection, private readonly accounts: Accounts, private readonly subject: string,
    nodeId: string, private readonly log?: (msg: string) => void) {
    this.origin = nodeId;
  }

  start(): void {
    this.accounts.onKeyChange = (change) => {
      this.nc.publish(this.subject, JSON.stringify({ ...change, node: this.origin }));
    };
    const sub = this.sub = this.nc.subscribe(this.subject);
    this.loop = (async () => {
      for await (const m of sub) {
        try {
          const c = m.json<{ op?: unknown; hash?: unknown; id?: unknown; node?: unknown }>();
          if (c.node === this.origin) continue;
          if (c.op === 'created' && typeof c.hash === 'string' && /^[0-9a-f]{64}$/.test(c.hash)) await this.accounts.adopt(c.hash);
          else if (c.op === 'revoked' && typeof c.id === 'number') this.accounts.forget(c.id);
        } catch (e) {
          this.log?.(`key sync: message on ${m.subject} not applied: ${String(e)}`);
        }
      }
    })();
  }

  async close(): Promise<void> {
    this.accounts.onKeyChange = null;
    if (this.sub !== null && !this.sub.isClosed()) this.sub.unsubscribe();
    await this.loop;
  }
}
