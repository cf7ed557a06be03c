/**
 * Reads a pdfkit PDF (uncompressed) as a text extractor does: each text run's glyphs through its
 * font's ToUnicode map, a run holding Arabic letters turned back from its visual order (drawn
 * right to left) to the order it is read in. Also the fonts the PDF embeds.
 */
const ARABIC_LETTER = /[\u0621-\u064a]/

/** The `/BaseFont` of every font the PDF embeds a file of (its subset prefix removed). */
export function embeddedFonts(pdf: Buffer): string[] {
  const source = pdf.toString('latin1')
  return [...source.matchAll(/\/FontName \/(?:[A-Z]{6}\+)?([\w-]+)[\s\S]*?\/FontFile2 \d+ 0 R/g)].map(
    (m) => m[1]!,
  )
}

function objects(source: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const m of source.matchAll(/(?:^|\n)(\d+) 0 obj\n([\s\S]*?)\nendobj/g)) found.set(m[1]!, m[2]!)
  return found
}

/** A ToUnicode CMap's `bfrange`s (pdfkit writes arrays): glyph id → its text. */
function cmapOf(text: string): Map<number, string> {
  const map = new Map<number, string>()
  for (const range of text.matchAll(/<([0-9a-f]+)> <[0-9a-f]+> \[([^\]]*)\]/gi)) {
    let gid = Number.parseInt(range[1]!, 16)
    for (const entry of range[2]!.matchAll(/<([0-9a-f ]+)>/gi)) {
      const units = entry[1]!.split(' ').map((h) => Number.parseInt(h, 16))
      map.set(gid++, String.fromCharCode(...units))
    }
  }
  return map
}

/** The runs of text the PDF shows, in reading order within each run, one a line. */
export function unicodePdfText(pdf: Buffer): string {
  const source = pdf.toString('latin1')
  const all = objects(source)
  const fonts = new Map<string, Map<number, string>>()
  for (const [, body] of all) {
    const resources = /\/Font <<([\s\S]*?)>>/.exec(body)?.[1]
    if (!resources) continue
    for (const [, name, ref] of resources.matchAll(/\/(F\d+) (\d+) 0 R/g)) {
      const toUnicode = /\/ToUnicode (\d+) 0 R/.exec(all.get(ref!) ?? '')?.[1]
      if (toUnicode) fonts.set(name!, cmapOf(all.get(toUnicode) ?? ''))
    }
  }
  // a run is one text object (BT … ET): pdfkit splits it into several TJ where a glyph is raised
  const runs: string[] = []
  let font: Map<number, string> | undefined
  let run = ''
  // the brackets' content as one class: no backtracking through the fonts' binary data
  for (const op of source.matchAll(/\nBT\n|\nET\n|\/(F\d+) [\d.]+ Tf|\[([<>0-9a-fA-F\s.-]*)\] TJ/g)) {
    if (op[0] === '\nBT\n') run = ''
    else if (op[0] === '\nET\n') {
      if (run) runs.push(ARABIC_LETTER.test(run) ? [...run].reverse().join('') : run)
    } else if (op[1]) font = fonts.get(op[1])
    else if (font) {
      const hex = [...op[2]!.matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1]!).join('')
      for (let i = 0; i < hex.length; i += 4)
        run += font.get(Number.parseInt(hex.slice(i, i + 4), 16)) ?? '\ufffd'
    }
  }
  return runs.join('\n')
}

/**
 * The text a PDF shows, read back from its (uncompressed) content streams: the strings of its
 * `Tj` and `TJ` text operators (pdfkit writes them as hex of the WinAnsi bytes).
 */
export function pdfText(pdf: Buffer): string {
  const source = pdf.toString('latin1')
  const lines: string[] = []
  for (const op of source.matchAll(/\[((?:<[0-9a-fA-F]*>|\s|-?[\d.]+)*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g)) {
    const hexes = op[1] !== undefined ? [...op[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1]!) : [op[2]!]
    lines.push(hexes.map((h) => Buffer.from(h, 'hex').toString('latin1')).join(''))
  }
  return lines.join('\n')
}
