/** Timers that keep this process alive right now: what a finished piece of work must not leave behind. */
export const pendingTimers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
