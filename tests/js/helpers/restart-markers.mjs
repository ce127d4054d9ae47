// A JPEG stream's restart intervals, read by a byte scan independent of the codec: the DRI's
// interval in MCUs (null without one) and how many RSTn markers the entropy-coded data holds.
// (0xFF in entropy-coded data is always followed by 0x00 or an RSTn, so the scan is exact
// for our streams, whose header segments hold no 0xFF 0xDD byte pair.)
export function restartMarkers(stream) {
  let dri = null;
  let rst = 0;
  for (let i = 2; i + 1 < stream.length; i++) {
    if (stream[i] !== 0xff) continue;
    const m = stream[i + 1];
    if (m >= 0xd0 && m <= 0xd7) rst++;
    else if (m === 0xdd) dri = (stream[i + 4] << 8) | stream[i + 5];
  }
  return { dri, rst };
}
