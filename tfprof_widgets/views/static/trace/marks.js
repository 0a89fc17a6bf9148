// The marks of one window, decoded: views/trace/marks.py Marks.pack() sends a header
// {x0, x1, cols, n, n_events, complete, columns: [[name, dtype, offset], ...]} and one
// little-endian buffer of columns (start f8, end f8, row i4, lane i4, name i4, count u4,
// [hits u4], depth u2); here each column becomes a typed array over that buffer.

const TYPED = { f8: Float64Array, i4: Int32Array, u4: Uint32Array, u2: Uint16Array };
function toArrayBuffer(buf) {
  if (buf instanceof ArrayBuffer) return buf;
  // DataView or typed array from the widget manager: copy so every column is aligned.
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice().buffer;
}
export function unpackMarks(header, buf) {
  const ab = toArrayBuffer(buf);
  const n = header.n;
  const m = { x0: header.x0, x1: header.x1, cols: header.cols, n, nEvents: header.n_events,
    reqCols: header.req_cols || header.cols,
    complete: header.complete, hits: null };
  for (const [field, dtype, off] of header.layout) m[field] = new TYPED[dtype](ab, off, n);
  return m;
}
export function emptyMarks(x0, x1) {
  return { x0, x1, cols: 0, n: 0, nEvents: 0, complete: true, start: new Float64Array(0),
    end: new Float64Array(0), row: new Int32Array(0), lane: new Int32Array(0),
    name: new Int32Array(0), count: new Uint32Array(0), depth: new Uint16Array(0),
    hits: null };
}
