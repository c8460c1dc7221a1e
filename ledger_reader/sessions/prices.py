"""What a model call cost, estimated from its tokens with a maintained price library.

Coding agents' session files hold tokens, never prices, so a session's cost
is an estimate: :mod:`genai_prices` (pydantic's library of model prices,
updated with each release) prices the prompt, its cache reads and cache
writes each at their own rate. A model the library does not know costs
``None``, never $0.

The library takes a second to import (it loads pydantic), so it is imported
on the first price asked for, and each model's price of a given usage is
remembered.
"""

from __future__ import annotations

import functools
from typing import Any, Final

PRICE_LIBRARY: Final = "genai-prices"
"""Where the estimates come from, as a reader of ``runtop ls --json`` is told."""


@functools.lru_cache(maxsize=65536)
def estimate_cost(
    model: str | None,
    prompt_tokens: int,
    cache_read_tokens: int,
    cache_write_tokens: int,
    output_tokens: int,
) -> float | None:
    """The estimated cost in USD of one model call, or ``None`` for a model without a price.

    ``prompt_tokens`` is everything the model was sent, cache reads and writes
    included (they are its parts, priced at their own rates).
    """
    if not model or model.startswith("<"):  # "<synthetic>": no model was called
        return None
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a dependency of runtop's
        return None
    usage: Any = Usage(
        input_tokens=prompt_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        output_tokens=output_tokens,
    )
    try:
        price = calc_price(usage, model_ref=model.rpartition("/")[2])
    except (LookupError, ValueError):
        return None
    return float(price.total_price)


__all__ = ["PRICE_LIBRARY", "estimate_cost"]
