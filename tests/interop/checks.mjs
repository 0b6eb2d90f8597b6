// What the JS drivers (lifecycle_js.mjs, mcp_js.mjs) share: checks that print one line each,
// `ok ...` or `FAIL ...`, and a count of the failures for the exit status.

/** A check that did not hold; its message says what was seen instead. */
export class Check extends Error {}

/** Fails the running check with `detail` unless `condition` holds. */
export function expect(condition, detail) {
  if (!condition) throw new Check(detail);
}

/** The reporting of one driver: `describe` renders an unexpected error (an SDK's) for its line. */
export function checks(describe) {
  let failures = 0;

  function report(ok, what, detail = '') {
    if (ok) {
      console.log(`ok ${what}`);
    } else {
      failures += 1;
      console.log(`FAIL ${what}: ${detail}`);
    }
  }

  /** Runs one check; any exception (an SDK error included) fails it, and so does taking
   * longer than a minute. */
  async function run(what, check) {
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Check('took longer than 60 s')), 60_000);
    });
    try {
      await Promise.race([check(), deadline]);
      report(true, what);
    } catch (e) {
      report(false, what, e instanceof Check ? e.message : describe(e));
    } finally {
      clearTimeout(timer);
    }
  }

  return { report, run, failed: () => failures };
}
