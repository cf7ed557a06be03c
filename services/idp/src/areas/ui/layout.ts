import { type Html, html } from '@svc/kit'
import type { FastifyReply } from 'fastify'

export function page(title: string, body: Html, scripts: string[] = []): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · svc</title>
        <style>
          body {
            font:
              16px/1.5 system-ui,
              sans-serif;
            max-width: 28rem;
            margin: 3rem auto;
            padding: 0 1rem;
          }
          label {
            display: block;
            margin: 0.75rem 0 0.25rem;
          }
          input {
            width: 100%;
            padding: 0.5rem;
            box-sizing: border-box;
          }
          button {
            margin-top: 1rem;
            padding: 0.5rem 1rem;
          }
          .error {
            color: #a00;
          }
          table {
            border-collapse: collapse;
            width: 100%;
            font-size: 0.9em;
          }
          td {
            border-top: 1px solid #ddd;
            padding: 0.25rem;
          }
        </style>
        ${scripts.map((src) => html`<script src="${src}" defer></script>`)}
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.value
}

/** Where to go after a form: a path on this site only, never another origin (no open redirect). */
export function safeReturnTo(value: string | undefined, fallback = '/ui/account'): string {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback
  return value
}

/** The signed-out page: hidden front-channel frames, then the post-logout redirect about two seconds later. */
export function signedOut(frames: string[], redirect?: string) {
  return page(
    'Signed out',
    html`${redirect ? html`<meta http-equiv="refresh" content="2;url=${redirect}" />` : ''}
      <h1>You are signed out</h1>
      ${frames.map((src) => html`<iframe src="${src}" hidden title="sign-out"></iframe>`)}
      ${redirect ? html`<p>Returning to the application…</p>` : ''}`,
  )
}

/** Answers with a page: the status, the title, and a body already made safe by `html`. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page(title, body))
}

/** A page that is only a heading and a sentence. */
export const sendMessage = (reply: FastifyReply, status: number, title: string, text: string) =>
  sendPage(reply, status, title, html`<h1>${title}</h1><p>${text}</p>`)
