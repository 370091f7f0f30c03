// Messages between the main thread and the webhook delivery worker (workers/webhook-sender.ts): one job per
// HTTP attempt, one result per job. Small plain objects, structured-cloned.

export interface SendJob {
  id: number;
  url: string;
  body: string;
  secret: string;
  variant: 'A' | 'B';
  eventType: string;
  /** X-Service-Webhook-Id (Variant A: the integer id; Variant B: the opaque id) */
  webhookId: string;
  deliveryId: string;
  /** X-Service-Delivery-Attempt: the attempt's place in its schedule (a replay is attempt 1 of its own) */
  attempt: number;
  /** X-Service-Replay when > 0: the ordinal of a replay among the delivery's replays */
  replay: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface SendResult {
  id: number;
  /** HTTP status of the answer; null when none came (refused, unreachable, timeout) */
  statusCode: number | null;
  error: string | null;
  /** wall clock when the attempt started (ms) */
  attemptedAt: number;
  durationMs: number;
}

/** The worker's first message, once it listens for jobs: its module graph is loaded, so a job is served at once. */
export interface WorkerReady {
  ready: true;
}
