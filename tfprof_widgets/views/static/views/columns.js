// Columns of a payload, decoded: views/tables.py encode_column() sends each table column (and
// each plot's hover-detail column, Plot.custom) as a plain array, as {cats, codes} (strings
// dictionary-encoded) or as {fc, codes} (the dictionary front-coded: [shared prefix length,
// rest, ...], for op paths).

export function decodeColumn(c) {
  // Columns come as plain arrays, or dictionary-encoded strings {cats, codes}, or with the
  // dictionary front-coded {fc: [shared prefix length, rest, ...], codes}.
  if (c && !Array.isArray(c) && c.fc) {
    const cats = [];
    let prev = "";
    for (let k = 0; k < c.fc.length; k += 2) { prev = prev.slice(0, c.fc[k]) + c.fc[k + 1]; cats.push(prev); }
    return c.codes.map((k) => (k < 0 ? null : cats[k]));
  }
  if (c && !Array.isArray(c) && c.cats) return c.codes.map((k) => (k < 0 ? null : c.cats[k]));
  return c;
}
