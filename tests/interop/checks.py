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


async def following(stream, keep=lambda event: event):
    """Follows `stream` (a subscription) in the background, each event put through `keep` into
    a list; returns once its first event has arrived, with that list and the follower task
    (awaiting it waits for the stream's end, and raises what ended it). A stream that ends
    before any event raises what ended it here."""
    events = []
    first = asyncio.Event()

    async def follow():
        try:
            async for event in stream:
                events.append(keep(event))
                first.set()
        finally:
            first.set()

    follower = asyncio.create_task(follow())
    await asyncio.wait_for(first.wait(), 15)
    if follower.done():
        follower.result()  # raises what ended the subscription early
    return events, follower


def exit_status():
    """1 when a check failed, else 0."""
    return 1 if failures else 0
