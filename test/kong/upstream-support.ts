/** What the upstream tests (a dead instance, a database outage) ask of real Kong and wait for. */

/** Kong's view of each target (kong_upstream_target_health, job-metrics): "healthy", "unhealthy" or undefined. */
export async function targetHealth(statusUrl: string, ports: number[]): Promise<Array<string | undefined>> {
  const text = await (await fetch(`${statusUrl}/metrics`)).text();
  return ports.map(
    (port) =>
      new RegExp(
        `^kong_upstream_target_health\\{[^}]*target="127\\.0\\.0\\.1:${port}"[^}]*state="(\\w+)"[^}]*\\} 1$`,
        'm',
      ).exec(text)?.[1],
  );
}

/** Polls `check` every 100 ms; the milliseconds it took, or a throw naming `what` past `limitMs`. */
export async function until(what: string, check: () => Promise<boolean>, limitMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}
