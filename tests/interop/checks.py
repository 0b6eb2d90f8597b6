"""What the SDK drivers in this folder share: one `ok ...` / `FAIL ...` line per check, and the
exit status that says whether any failed (read by tests/support/driver.rs)."""

import asyncio

failures = 0


def report(ok, what, detail=''):
    global failures
    if ok:
        print(f'ok {what}', flush=True)
    else:
        failures += 1
        print(f'FAIL {what}: {detail}', flush=True)


class Check(Exception):
    """A check that did not hold; its message says what was seen instead."""


def expect(condition, detail):
    if not condition:
        raise Check(detail)


async def run(what, check):
    """Runs one check; any exception (an SDK error included) fails it, with its repr, and so
    does taking longer than a minute."""
    try:
        await asyncio.wait_for(check(), 60)
        report(True, what)
    except Check as e:
        report(False, what, str(e))
    except Exception as e:  # noqa: BLE001 - any failure of the SDK call is the check's failure
        report(False, what, repr(e))


def exit_status():
    """1 when a check failed, else 0."""
    return 1 if failures else 0
