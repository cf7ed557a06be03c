// jsqr is CommonJS whose types declare only a default export: under NodeNext that is `.default`
import jsqr from 'jsqr'

/** The SVG QR code drawn as pixels (qrcode draws each row's dark modules as `h` runs), read back by jsQR. */
export function readQr(svg: string) {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)![1])
  const dark = new Set<string>()
  let x = 0
  let y = 0
  for (const [, op, a, b] of /d="([^"]+)"\/><\/svg>/
    .exec(svg)![1]!
    .matchAll(/([Mmh])(\d+(?:\.\d+)?)(?: (\d+(?:\.\d+)?))?/g)) {
    if (op === 'M') [x, y] = [Number(a), Math.floor(Number(b))]
    else if (op === 'm') [x, y] = [x + Number(a), y + Math.floor(Number(b))]
    else for (let end = x + Number(a); x < end; x++) dark.add(`${x},${y}`)
  }
  const scale = 4
  const width = size * scale
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255)
  for (let py = 0; py < width; py++)
    for (let px = 0; px < width; px++)
      if (dark.has(`${Math.floor(px / scale)},${Math.floor(py / scale)}`))
        pixels.fill(0, (py * width + px) * 4, (py * width + px) * 4 + 3)
  return jsqr.default(pixels, width, width)?.data
}
