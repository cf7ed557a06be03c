import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/**
 * The font of the Arabic PDFs: IBM Plex Sans Arabic (SIL Open Font License 1.1), Arabic and Latin
 * glyphs with the OpenType tables fontkit shapes Arabic with (joining forms, lam-alef, marks),
 * installed from the npm registry (`@expo-google-fonts/ibm-plex-sans-arabic`, pinned: the fonts
 * only, no install script) and read from node_modules once; pdfkit embeds the subset a document
 * uses. Its joined forms are the Unicode presentation forms, one glyph a letter, so the PDF's
 * ToUnicode map gives the letters back (Noto Sans Arabic draws a dotted letter as a shared dotless
 * glyph and its dots, which copies as the wrong letters).
 */
export const ARABIC_FONT = 'IBMPlexSansArabic'
const FILES = {
  regular: '@expo-google-fonts/ibm-plex-sans-arabic/400Regular/IBMPlexSansArabic_400Regular.ttf',
  bold: '@expo-google-fonts/ibm-plex-sans-arabic/700Bold/IBMPlexSansArabic_700Bold.ttf',
}

let loaded: { regular: Buffer; bold: Buffer } | undefined

export function arabicFonts(): { regular: Buffer; bold: Buffer } {
  if (!loaded) {
    const require = createRequire(import.meta.url)
    loaded = {
      regular: readFileSync(require.resolve(FILES.regular)),
      bold: readFileSync(require.resolve(FILES.bold)),
    }
  }
  return loaded
}
