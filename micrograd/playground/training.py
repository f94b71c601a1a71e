"""The training view's API (owned by the `trainview` work; a placeholder until it lands)."""

from __future__ import annotations

from typing import Any

ROUTES: dict[tuple[str, str], Any] = {}
