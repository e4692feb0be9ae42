/**
 * Poll until `check` passes (it throws, or its expectations fail, until then), up to `ms`:
 * for things that happen "within a second" (live file sync, realtime events), never a sleep.
 */
export async function eventually<T>(check: () => Promise<T>, ms = 3000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
