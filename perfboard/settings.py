"""perfboard.toml: the settings a team writes once, read by every command and page.

Today it holds the minimum effect of change detection: a change smaller than this is no
alert, however significant it is for the series' noise. Nobody acts on a 0.05 % step,
and a near-noiseless series makes one significant (p = 3.8e-167). Peers set the same
floor: Perfherder alerts from 2 %, LNT ignores changes under 1 %; perfboard's default is
1 %.

    [detect]
    min_change_pct = 1.0        # every series

    [detect.metric]             # by metric
    throughput = 2.0

    [detect.project]            # by project
    ernie = 0.5

    [detect.series]             # by series id (the Trends page lists them)
    "1234" = 5.0

The most specific wins: series, then project, then metric, then the default. The file is
$PERFBOARD_CONFIG, else perfboard.toml in the working directory; without one, the
defaults hold. A file that cannot be read is an error that names it, never ignored.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from perfboard.errors import UsageError

DEFAULT_MIN_CHANGE_PCT = 1.0
CONFIG_FILE = "perfboard.toml"


@dataclass(frozen=True, slots=True)
class DetectSettings:
    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT
    by_metric: dict[str, float] = field(default_factory=dict)
    by_project: dict[str, float] = field(default_factory=dict)
    by_series: dict[int, float] = field(default_factory=dict)

    def min_change_for(self, series_id: int, project: str, metric: str) -> float:
        """The minimum effect (%) of one series: the most specific setting."""
        for table, key in (
            (self.by_series, series_id),
            (self.by_project, project),
            (self.by_metric, metric),
        ):
            if key in table:
                return table[key]
        return self.min_change_pct


@dataclass(frozen=True, slots=True)
class Settings:
    detect: DetectSettings = field(default_factory=DetectSettings)
    path: Path | None = None  # the file they came from; None: the defaults


def config_path() -> Path | None:
    configured = os.environ.get("PERFBOARD_CONFIG")
    if configured:
        return Path(configured)
    default = Path(CONFIG_FILE)
    return default if default.exists() else None


def load(path: Path | None = None) -> Settings:
    """The settings of `path` (default: config_path()); the defaults without a file."""
    path = path if path is not None else config_path()
    if path is None:
        return Settings()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: settings file not found (PERFBOARD_CONFIG)") from None
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: settings cannot be read: {e}") from None
    return Settings(_detect(data.get("detect", {}), path), path)


@cache
def current() -> Settings:
    """The settings of this process, read once."""
    return load()


def _detect(table: object, path: Path) -> DetectSettings:
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [detect] must be a table")
    default = _percent(table.get("min_change_pct", DEFAULT_MIN_CHANGE_PCT), path, "min_change_pct")
    by = {}
    for name in ("metric", "project", "series"):
        sub = table.get(name, {})
        if not isinstance(sub, dict):
            raise UsageError(f"{path}: [detect.{name}] must be a table of percentages")
        by[name] = {k: _percent(v, path, f"detect.{name}.{k}") for k, v in sub.items()}
    try:
        series = {int(k): v for k, v in by["series"].items()}
    except ValueError:
        raise UsageError(f"{path}: [detect.series] keys are series ids (numbers)") from None
    return DetectSettings(default, by["metric"], by["project"], series)


def _percent(value: object, path: Path, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{path}: {where} = {value!r} is not a percentage")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise UsageError(f"{path}: {where} = {value!r} must be 0 or more")
    return number
