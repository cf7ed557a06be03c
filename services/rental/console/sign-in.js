// @ts-check
// A signed-out visit to /console (a bookmark, a mailed link such as /console#/tasks/{id}): the
// screen asked for is kept in this tab for after the sign-in (app.js restores it: the fragment does
// not survive the idp's sign-in form), then the sign-in starts.
try {
  if (location.hash.startsWith('#/')) globalThis.sessionStorage.setItem('console.return', location.hash)
  // the language asked for (?lang=, the cookie): the console opens in it after the sign-in
  const lang = document.documentElement.dataset.lang
  if (lang) globalThis.localStorage.setItem('console.lang', lang)
} catch {}
location.replace(String(document.documentElement.dataset.signIn))
