/**
 * The order-expiry sweep: runs `expireOrders` every `intervalMs`, one pass at a time (the next pass is
 * scheduled when the previous one ends, so passes never overlap in a process). Several processes may
 * sweep at once: expireOrders (commands/expire.ts) handles each market under its row lock. The timer does
 * not keep the process alive; `stop()` cancels the next pass and waits for the running one, so that the
 * database pool can be closed right after.
 */
export interface Sweep {
  stop(): Promise<void>;
}

export function startExpirySweep(
  trading: { expireOrders(): Promise<number> },
  intervalMs: number,
  onError: (error: unknown) => void,
): Sweep {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = trading
        .expireOrders()
        .then(
          () => undefined,
          (error: unknown) => onError(error),
        )
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
