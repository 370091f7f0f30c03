// NATS for tests: the server of NATS_URL (CI: 127.0.0.1:4222), which keeps its state between runs, so every test
// file takes a subject prefix and a stream name of its own and deletes the stream at teardown.
//
//   const n = natsOrSkip();  if (n === null) ...skip...
//   const ns = await testNats(t);   // { url, prefix, stream, nc, env }

import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** the reason a NATS test is skipped, or false when NATS_URL is set */
export const NATS_SKIP: string | false = process.env.NATS_URL ? false : 'NATS_URL is not set (CI sets nats://127.0.0.1:4222 in .ci/run)';
if (NATS_SKIP !== false) console.log(`# skipping: ${NATS_SKIP}`);

export interface TestNats {
  url: string;
  /** subject prefix of this run: ingest on `<prefix>.ingest.<sport>`, the stream on `<prefix>.obs.>` */
  prefix: string;
  stream: string;
  nc: NatsConnection;
  /** the service environment for this run's NATS (add CLUSTER=1 and NODE_ID for cluster nodes) */
  env: Record<string, string>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function testNats(t: Teardown): Promise<TestNats> {
  const url = process.env.NATS_URL!;
  const tag = randomBytes(5).toString('hex');
  const prefix = `lwtest.${tag}`;
  const stream = `LWTEST_${tag}`;
  const nc = await connect({ servers: url });
  t.teardown(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  return { url, prefix, stream, nc, env: { NATS_URL: url, NATS_SUBJECT_PREFIX: prefix, NATS_STREAM: stream } };
}
