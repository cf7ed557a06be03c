import { html } from '@svc/kit'
import QRCode from 'qrcode'
import { type Lang, t } from '../../pages/i18n.ts'
import type { createOffer } from './offers.ts'

/** The account page's section: offer the identity credential to a wallet. */
export const offerSection = (lang: Lang, csrf: string) =>
  html`<h3>${t(lang, 'Wallet credential')}</h3>
    <form method="post" action="/ui/credentials/offer">
      <input type="hidden" name="csrf" value="${csrf}" />
      <p>${t(lang, 'Put your svc identity (your DID, email address and name) in a digital wallet.')}</p>
      <label
        ><input type="checkbox" name="tx_code" value="on" checked />
        ${t(lang, 'Protect it with a six-digit code')}</label
      >
      <button type="submit">${t(lang, 'Offer it to my wallet')}</button>
    </form>`

/**
 * The offer for the wallet to scan, or open on this device: the QR code and the link carry the
 * offer by value; the transaction code is shown beside them, never inside.
 */
export async function offerPage(lang: Lang, offer: Awaited<ReturnType<typeof createOffer>>) {
  const qr = Buffer.from(await QRCode.toString(offer.uri, { type: 'svg' })).toString('base64')
  return html`<h1>${t(lang, 'Your credential offer')}</h1>
    <p>
      ${t(lang, 'Scan this with your wallet within {n} minutes. It works once.', { n: Math.round(offer.expiresIn / 60) })}
    </p>
    <img src="data:image/svg+xml;base64,${qr}" alt="${t(lang, 'QR code of the credential offer')}" width="256" height="256" />
    <p><a href="${offer.uri}" data-offer="${offer.uri}">${t(lang, 'Open in a wallet on this device')}</a></p>
    ${
      offer.txCode
        ? html`<p>
          ${t(lang, 'When the wallet asks, enter this code:')} <strong dir="ltr" data-tx-code="${offer.txCode}">${offer.txCode}</strong>
        </p>`
        : ''
    }
    <p><a href="/ui/account">${t(lang, 'Back to your account')}</a></p>`
}
