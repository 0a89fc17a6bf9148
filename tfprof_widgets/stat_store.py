"""Every stat of every event of a run, kept compact and found by name: :class:`StatStore`.

A capture holds one to ten stats per event (step numbers, flow ids, allocator figures, kernel
launch details...). The long table :attr:`tfprof_widgets.Run.event_stats` (schema.EVENT_STATS)
shows them one row each with five value columns: about 30 bytes a stat, more than the event
itself. The store keeps them the way XSpace does, by stat: one *segment* per (stat name, value
kind) holding the owning events (int32, ascending) and the values in the narrowest dtype that
holds them (a flag in one byte, a string as a code into the segment's own values). An analysis
asks for one stat at a time (:mod:`tfprof_widgets.stat_columns`), which costs the rows of that
stat only, never a scan of all stats; the long table is built from the store when first read.

Nothing is dropped: every stat row of the file is in one segment. Within a segment rows keep
the file's order per event, so when an event carries a stat twice the later one wins; the order
of different stats within one event is not kept (the long table lists an event's stats by
stat).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["KINDS", "KIND_CODE", "StatStore"]

# Stat value kinds, in the order of their int8 codes (the long table's `kind` categories).
KINDS = ("int", "uint", "double", "str", "bytes", "none")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_INT, _UINT, _DOUBLE, _STR, _BYTES, _NONE = range(6)
_TEXT_KINDS = (_STR, _BYTES)
_N_KINDS = len(KINDS)
_SIGNED = (np.int8, np.int16, np.int32, np.int64)
_UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)
_MAX_OWNER = 2**31 - 1


def _narrow_signed(v: np.ndarray) -> np.ndarray:
    if not len(v):
        return v.astype(np.int8)
    lo, hi = int(v.min()), int(v.max())
    for t in _SIGNED:
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return v.astype(t, copy=False)
    return v


def _narrow_unsigned(v: np.ndarray) -> np.ndarray:
    """``v``: uint64 values (as stored two's complement in int64, viewed unsigned)."""
    u = v.view(np.uint64) if v.dtype == np.int64 else v
    if not len(u):
        return u.astype(np.uint8)
    hi = int(u.max())
    for t in _UNSIGNED:
        if hi <= np.iinfo(t).max:
            return u.astype(t, copy=False)
    return u


def _narrow_codes(codes: np.ndarray, n_values: int) -> np.ndarray:
    for t in _SIGNED:
        if n_values <= np.iinfo(t).max:
            return codes.astype(t, copy=False)
    return codes


def _local_codes(codes: np.ndarray, values, distinct: bool = False) -> tuple[np.ndarray, list]:
    """Codes into ``values`` (a list or object array) as codes into the distinct values the
    rows use, each once (equal values from several sources merged, unless ``distinct`` says
    that ``values`` holds each value once)."""
    if not len(codes):
        return codes.astype(np.int8), []
    codes = np.asarray(codes, np.int64)
    top = int(codes.max())
    if top < 4 * len(codes) + (1 << 16):  # small codes: a table instead of a sort
        seen = np.zeros(top + 1, bool)
        seen[codes] = True
        used = np.flatnonzero(seen)
        lut = np.zeros(top + 1, np.int64)
        lut[used] = np.arange(len(used))
        inverse = lut[codes]
    else:
        used, inverse = np.unique(codes, return_inverse=True)
    vals = np.empty(len(used), object)
    vals[:] = [values[i] for i in used.tolist()]
    if distinct:
        return _narrow_codes(inverse, len(vals)), list(vals)
    remap, merged = pd.factorize(vals, use_na_sentinel=False)
    local = remap[inverse] if len(merged) != len(vals) else inverse
    return _narrow_codes(local, len(merged)), list(merged)


class StatStore:
    """The stats of ``n_owners`` owners (a run's events), one segment per (name, kind).

    Attributes (read-only by convention; see :meth:`rows` for one stat's rows):
        names: the stat names, each once.
        seg_name, seg_kind: each segment's name (index into ``names``) and kind (KIND_CODE).
        bounds: segment ``s`` holds rows ``bounds[s]:bounds[s + 1]``.
        owner: int32, each row's owner, ascending within a segment.
        values: per segment, its values (ints narrowed, doubles as float64, strings as codes
            into ``texts[s]``; an empty array for kind ``none``).
        texts: per segment, its distinct strings/bytes (None for other kinds).
    """

    __slots__ = (
        "names",
        "seg_name",
        "seg_kind",
        "bounds",
        "owner",
        "values",
        "texts",
        "n_owners",
        "_by_name",
    )

    def __init__(
        self,
        names: list[str],
        seg_name: np.ndarray,
        seg_kind: np.ndarray,
        bounds: np.ndarray,
        owner: np.ndarray,
        values: list[np.ndarray],
        texts: list[list | None],
        n_owners: int,
    ) -> None:
        self.names = names
        self.seg_name = np.asarray(seg_name, np.int32)
        self.seg_kind = np.asarray(seg_kind, np.int8)
        self.bounds = np.asarray(bounds, np.int64)
        self.owner = np.asarray(owner, np.int32)
        self.values = values
        self.texts = texts
        self.n_owners = int(n_owners)
        self._by_name: dict[str, list[int]] | None = None

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def empty(cls, n_owners: int = 0) -> StatStore:
        return cls([], [], [], [0], np.zeros(0, np.int32), [], [], n_owners)

    @classmethod
    def from_columns(
        cls,
        owner: np.ndarray,
        name_code: np.ndarray,
        names: list[str],
        kind: np.ndarray,
        int_value: np.ndarray,
        float_value: np.ndarray,
        str_code: np.ndarray,
        str_values,
        n_owners: int,
        distinct_strings: bool = False,
    ) -> StatStore:
        """From long rows: each row's owner, name (code into ``names``), kind (KIND_CODE),
        int value (int/uint kinds, uint as two's complement), float value (double) and string
        (code into ``str_values``, str/bytes kinds; ``distinct_strings``: it holds each value
        once). Rows of one owner keep their order."""
        n = len(owner)
        if not n:
            return cls.empty(n_owners)
        if n_owners > _MAX_OWNER + 1:
            raise ValueError(f"{n_owners} events are more than a run holds")
        name_code = np.asarray(name_code, np.int64)
        kind = np.asarray(kind, np.int64)
        key = name_code * _N_KINDS + kind
        n_keys = (len(names) + 1) * _N_KINDS
        # A stable sort by (name, kind); radix sort on 16-bit keys (most captures).
        key_t = key.astype(np.uint16) if n_keys <= 1 << 16 else key
        order = np.argsort(key_t, kind="stable")
        skey = key[order]
        cuts = np.flatnonzero(skey[1:] != skey[:-1]) + 1
        starts = np.concatenate([[0], cuts])
        ends = np.concatenate([cuts, [n]])
        own = np.asarray(owner)[order].astype(np.int32)
        seg_keys = skey[starts]
        seg_name_all = seg_keys // _N_KINDS
        used_names, seg_name = np.unique(seg_name_all, return_inverse=True)
        values: list[np.ndarray] = []
        texts: list[list | None] = []
        text_list = str_values if isinstance(str_values, (list, np.ndarray)) else list(str_values)
        for s, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            rows = order[a:b]
            seg_own = own[a:b]
            if b - a > 1 and not (seg_own[1:] >= seg_own[:-1]).all():
                o = np.argsort(seg_own, kind="stable")
                rows, own[a:b] = rows[o], seg_own[o]
            k = int(seg_keys[s] % _N_KINDS)
            if k == _INT:
                values.append(_narrow_signed(np.asarray(int_value)[rows]))
                texts.append(None)
            elif k == _UINT:
                values.append(_narrow_unsigned(np.asarray(int_value, np.int64)[rows]))
                texts.append(None)
            elif k == _DOUBLE:
                values.append(np.asarray(float_value, np.float64)[rows])
                texts.append(None)
            elif k in _TEXT_KINDS:
                codes, vals = _local_codes(np.asarray(str_code)[rows], text_list, distinct_strings)
                values.append(codes)
                texts.append(vals)
            else:
                values.append(np.zeros(0, np.int8))
                texts.append(None)
        return cls(
            [names[i] for i in used_names.tolist()],
            seg_name,
            seg_keys % _N_KINDS,
            np.concatenate([starts, [n]]),
            own,
            values,
            texts,
            n_owners,
        )

    @classmethod
    def from_frame(cls, df: pd.DataFrame, n_owners: int, owner: str = "event") -> StatStore:
        """From a long table (schema.EVENT_STATS columns)."""
        if not len(df):
            return cls.empty(n_owners)
        stat = df["stat"].astype("category")
        kind = df["kind"].astype(str).map(KIND_CODE).to_numpy(np.int64)
        sv = df["str_value"].astype("category")
        return cls.from_columns(
            df[owner].to_numpy(np.int64),
            stat.cat.codes.to_numpy(np.int64),
            [str(c) for c in stat.cat.categories.tolist()],
            kind,
            df["int_value"].to_numpy(np.int64),
            df["float_value"].to_numpy(np.float64),
            sv.cat.codes.to_numpy(np.int64),
            list(sv.cat.categories),
            n_owners,
        )

    @classmethod
    def concat(cls, stores: list[StatStore], offsets: list[int], n_owners: int) -> StatStore:
        """The stores of several hosts as one: owners shifted by each store's offset."""
        parts = [(s, o) for s, o in zip(stores, offsets) if len(s)]
        if not parts:
            return cls.empty(n_owners)
        if len(parts) == 1 and parts[0][1] == 0:
            s = parts[0][0]
            return cls(
                s.names, s.seg_name, s.seg_kind, s.bounds, s.owner, s.values, s.texts, n_owners
            )
        names = list(dict.fromkeys(n for s, _ in parts for n in s.names))
        pos = {n: i for i, n in enumerate(names)}
        # Segments of every store, grouped by (name, kind), in store order.
        groups: dict[tuple[int, int], list[tuple[StatStore, int, int]]] = {}
        for s, off in parts:
            for i in range(len(s.seg_name)):
                key = (pos[s.names[s.seg_name[i]]], int(s.seg_kind[i]))
                groups.setdefault(key, []).append((s, i, off))
        seg_name, seg_kind, owners, values, texts = [], [], [], [], []
        for (name, kind), segs in sorted(groups.items()):
            seg_name.append(name)
            seg_kind.append(kind)
            owners.append(np.concatenate([s.segment_owner(i) + off for s, i, off in segs]))
            if kind in _TEXT_KINDS:
                vals: list = []
                codes = []
                for s, i, _ in segs:
                    codes.append(s.values[i].astype(np.int64) + len(vals))
                    vals.extend(s.texts[i])
                c, t = _local_codes(np.concatenate(codes), vals)
                values.append(c)
                texts.append(t)
            else:
                v = np.concatenate([s.values[i] for s, i, _ in segs])
                if kind == _INT:
                    v = _narrow_signed(v.astype(np.int64))
                elif kind == _UINT:
                    v = _narrow_unsigned(v.astype(np.uint64))
                values.append(v)
                texts.append(None)
        return cls._of_segments(names, seg_name, seg_kind, owners, values, texts, n_owners)

    @classmethod
    def _of_segments(cls, names, seg_name, seg_kind, owners, values, texts, n_owners):
        """A store of segments given one by one (each its owners, values and texts)."""
        return cls(
            names,
            np.array(seg_name, np.int32),
            np.array(seg_kind, np.int8),
            np.concatenate([[0], np.cumsum([len(o) for o in owners])]),
            np.concatenate(owners),
            values,
            texts,
            n_owners,
        )

    # -- reading ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.bounds[-1])

    def __contains__(self, name: str) -> bool:
        return name in self._index()

    def __getstate__(self):
        return tuple(getattr(self, s) for s in self.__slots__[:-1])

    def __setstate__(self, state) -> None:
        for s, v in zip(self.__slots__, state):
            object.__setattr__(self, s, v)
        self._by_name = None

    def __eq__(self, other: object) -> bool:
        """Same stats in the same layout: names, segments, owners, values (NaN equal to
        NaN) and strings."""
        if not isinstance(other, StatStore):
            return NotImplemented
        same = lambda a, b: (  # noqa: E731
            a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
        )
        return (
            self.names == other.names
            and self.n_owners == other.n_owners
            and all(
                same(getattr(self, f), getattr(other, f))
                for f in ("seg_name", "seg_kind", "bounds", "owner")
            )
            and len(self.values) == len(other.values)
            and all(same(a, b) for a, b in zip(self.values, other.values))
            and self.texts == other.texts
        )

    __hash__ = None  # type: ignore[assignment]

    def _index(self) -> dict[str, list[int]]:
        if self._by_name is None:
            out: dict[str, list[int]] = {}
            for i, nc in enumerate(self.seg_name.tolist()):
                out.setdefault(self.names[nc], []).append(i)
            self._by_name = out
        return self._by_name

    def segment_owner(self, s: int) -> np.ndarray:
        return self.owner[self.bounds[s] : self.bounds[s + 1]]

    def segments(self, name: str) -> list[int]:
        """The segments holding stat ``name`` (one per kind it comes in; none if absent)."""
        return self._index().get(name, [])

    def rows(self, name: str) -> StoredStatRows:
        """Every row of one stat as long columns, ordered by owner (the later of two rows of
        one owner is the later in the file, or of the later kind in KINDS)."""
        segs = self.segments(name)
        return StoredStatRows.of_segments(self, segs)

    def nbytes(self) -> int:
        """Memory the store holds, bytes (arrays plus the distinct strings)."""
        total = self.owner.nbytes + self.bounds.nbytes + sum(v.nbytes for v in self.values)
        for t in self.texts:
            if t:
                total += sum(len(x) + 49 for x in t)
        return int(total)

    # -- changing owners ----------------------------------------------------------------------
    def remap(self, new_owner: np.ndarray, n_owners: int | None = None) -> StatStore:
        """The store with each owner ``o`` renamed ``new_owner[o]`` (-1: its rows dropped),
        rows re-sorted by their new owner within each segment."""
        n_owners = self.n_owners if n_owners is None else n_owners
        if not len(self):
            return StatStore.empty(n_owners)
        mapped = np.asarray(new_owner, np.int64)[self.owner]
        seg_name, seg_kind, owners, values, texts = [], [], [], [], []
        for s in range(len(self.seg_name)):
            a, b = int(self.bounds[s]), int(self.bounds[s + 1])
            o = mapped[a:b]
            v = self.values[s]
            keep = o >= 0
            if not keep.all():
                o = o[keep]
                v = v[keep] if len(v) else v
            if not len(o):
                continue
            if len(o) > 1 and not (o[1:] >= o[:-1]).all():
                order = np.argsort(o, kind="stable")
                o = o[order]
                v = v[order] if len(v) else v
            t = self.texts[s]
            if t is not None and len(o) < b - a:
                v, t = _local_codes(v.astype(np.int64), t)
            seg_name.append(self.seg_name[s])
            seg_kind.append(self.seg_kind[s])
            owners.append(o.astype(np.int32))
            values.append(v)
            texts.append(t)
        if not owners:
            return StatStore.empty(n_owners)
        used, seg_name = np.unique(np.array(seg_name, np.int64), return_inverse=True)
        names = [self.names[i] for i in used.tolist()]
        return StatStore._of_segments(names, seg_name, seg_kind, owners, values, texts, n_owners)

    def select(self, keep: np.ndarray) -> StatStore:
        """Only the stats of owners where ``keep`` is true, owners renumbered in order."""
        new = np.full(len(keep), -1, np.int64)
        new[keep] = np.arange(int(np.count_nonzero(keep)))
        return self.remap(new, int(np.count_nonzero(keep)))

    # -- the long table -----------------------------------------------------------------------
    @property
    def int_value(self) -> np.ndarray:
        """The long table's ``int_value`` column (rows ordered by owner)."""
        return StoredStatRows.of_segments(self, list(range(len(self.seg_name)))).int_value

    @property
    def float_value(self) -> np.ndarray:
        """The long table's ``float_value`` column (rows ordered by owner)."""
        return StoredStatRows.of_segments(self, list(range(len(self.seg_name)))).float_value

    def to_frame(self, owner: str = "event") -> pd.DataFrame:
        """The long table: one row per stat, ordered by owner (schema.EVENT_STATS)."""
        cols = StoredStatRows.of_segments(self, list(range(len(self.seg_name))))
        stat = pd.Categorical.from_codes(
            np.repeat(self.seg_name.astype(np.int64), np.diff(self.bounds))[cols.order]
            if len(self)
            else np.zeros(0, np.int64),
            dtype=pd.CategoricalDtype(pd.Index(self.names, dtype=object)),
        )
        return pd.DataFrame(
            {
                owner: cols.owner.astype(np.int64),
                "stat": stat,
                "kind": pd.Categorical.from_codes(cols.kind, categories=list(KINDS)),
                "int_value": cols.int_value,
                "float_value": cols.float_value,
                "str_value": cols.str_value,
            }
        )


class StoredStatRows:
    """Rows of some segments of a store (a long table's rows, not one typed column per
    owner: that is :mod:`tfprof_widgets.stat_columns`), ordered by owner: ``owner``
    (int64), ``kind`` (int8 codes), ``int_value`` (int64; uint two's complement),
    ``float_value`` (float64, NaN for other kinds), ``str_value`` (categorical; missing for
    other kinds). ``order`` is the permutation that sorted the segments' rows by owner."""

    __slots__ = ("owner", "kind", "int_value", "float_value", "_codes", "_texts", "order")

    @classmethod
    def of_segments(cls, store: StatStore, segs: list[int]) -> StoredStatRows:
        out = cls()
        b = store.bounds
        lengths = [int(b[s + 1] - b[s]) for s in segs]
        n = sum(lengths)
        owner = np.concatenate([store.segment_owner(s) for s in segs]) if segs else np.zeros(0)
        owner = owner.astype(np.int64)
        kind = np.repeat(store.seg_kind[segs].astype(np.int8), lengths) if segs else np.zeros(0)
        ints = np.zeros(n, np.int64)
        floats = np.full(n, np.nan)
        codes = np.full(n, -1, np.int64)
        texts: list = []
        at = 0
        for s, m in zip(segs, lengths):
            k, v = int(store.seg_kind[s]), store.values[s]
            if k == _INT:
                ints[at : at + m] = v
            elif k == _UINT:
                ints[at : at + m] = v.astype(np.uint64).view(np.int64)
            elif k == _DOUBLE:
                floats[at : at + m] = v
            elif k in _TEXT_KINDS:
                codes[at : at + m] = v.astype(np.int64) + len(texts)
                texts.extend(store.texts[s])
            at += m
        order = None
        if len(segs) > 1 and n > 1 and not (owner[1:] >= owner[:-1]).all():
            order = np.argsort(owner, kind="stable")
            owner, kind, ints, floats, codes = (
                owner[order],
                kind[order],
                ints[order],
                floats[order],
                codes[order],
            )
        out.order = order if order is not None else slice(None)
        out.owner = owner
        out.kind = np.asarray(kind, np.int8)
        out.int_value = ints
        out.float_value = floats
        out._codes = codes
        out._texts = texts
        return out

    def __len__(self) -> int:
        return len(self.owner)

    def keep_strings(self, rows: np.ndarray) -> None:
        """Keep the strings of these rows only (the caller keeps the same rows of the other
        columns)."""
        self._codes = self._codes[rows]

    @property
    def str_value(self) -> pd.Categorical:
        """The string values as a categorical (distinct values once)."""
        codes, texts = self._codes, self._texts
        if len(texts) != len(set(texts)):
            codes, texts = _merge_texts(codes, texts)
        cats = pd.Index(
            np.array(texts, dtype=object) if texts else np.zeros(0, object), dtype=object
        )
        return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats))

    def texts_of_rows(self) -> np.ndarray:
        """Each row's string as an object array (None where the row is no string)."""
        table = np.array([*self._texts, None], dtype=object)
        return table[self._codes]


def _merge_texts(codes: np.ndarray, texts: list) -> tuple[np.ndarray, list]:
    merged: dict = {}
    remap = np.fromiter((merged.setdefault(v, len(merged)) for v in texts), np.int64, len(texts))
    return np.where(codes >= 0, remap[np.maximum(codes, 0)], -1), list(merged)
