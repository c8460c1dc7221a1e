"""Large OTLP exports are taken a few at a time: the next is told to come back, small ones
go on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from run_manager.otlp.route import LARGE_BODY, MAX_LARGE_BODIES
from tests.run_manager.server.test_auth_before_body import TOKEN, exchange, post, standalone

pytestmark = pytest.mark.timeout(60)


async def test_a_large_export_beyond_the_cap_gets_503_with_retry_after(tmp_path: Path) -> None:
    async with standalone(tmp_path) as (host, port):
        head = (
            f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {4 * LARGE_BODY}\r\n\r\n{{"
        ).encode()
        held = []
        for _ in range(MAX_LARGE_BODIES):
            _, writer = await asyncio.open_connection(host, port)
            writer.write(head)
            await writer.drain()
            held.append(writer)
        try:
            # Each held export is being read; one more large one is turned away at once...
            for _ in range(50):
                answer = await exchange(host, port, head, wait=2)
                if answer.startswith(b"HTTP/1.1 503 "):
                    break
                await asyncio.sleep(0.05)  # the held ones' handlers may not have begun
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
            assert b"Retry-After: 1" in answer
            assert b"large exports are being taken already" in answer
            # ... while a small one is taken.
            small = post(
                "/v1/traces",
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n",
                b'{"resourceSpans": []}',
            )
            answer = await exchange(host, port, small)
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
        finally:
            for writer in held:
                writer.close()
