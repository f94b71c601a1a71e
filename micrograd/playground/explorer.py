"""The backprop explorer's API (filled in below the skeleton)."""

from __future__ import annotations

from typing import Any

ROUTES: dict[tuple[str, str], Any] = {}
