import { type Static, type TNumberOptions, type TObjectOptions, type TSchemaOptions, Type } from 'typebox'

/**
 * Schema atoms the services' routes share. Each builds the JSON Schema its routes published before
 * it was shared (same keywords, same order), so using one leaves the OpenAPI document unchanged.
 */

/** An amount as every money field shows it (kit `money()`): `{ amount_fils, currency, display }`. */
export const Money = Type.Object({
  amount_fils: Type.Integer(),
  currency: Type.String(),
  display: Type.String(),
})
export type Money = Static<typeof Money>

/** `Money` whose `display` is described in the document (the market's and the budgets' routes). */
export const DisplayedMoney = Type.Object({
  amount_fils: Type.Integer(),
  currency: Type.String(),
  display: Type.String({ description: 'formatted for a person, in the request’s language' }),
})

/**
 * An amount in fils a client gives: a positive safe integer unless `options` bound it otherwise
 * (`{ minimum: 0, maximum: 1_000_000_000 }` for the engagement settings' amounts).
 */
export const Fils = (options: TNumberOptions = {}) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options })

/** A language the pages, money and documents speak: `en` or `ar` (kit `MoneyLocale`). */
export const Lang = (options?: TSchemaOptions) =>
  Type.Union([Type.Literal('en'), Type.Literal('ar')], options)

/** The `?lang=` query of the routes that show money or documents (optional: the reader's language otherwise). */
export const LangQuery = (options?: TObjectOptions) => Type.Object({ lang: Type.Optional(Lang()) }, options)
