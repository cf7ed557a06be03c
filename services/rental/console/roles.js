// @ts-check
// Roles in words: each role a card with the groups of permissions it holds (a sentence each), the
// exact scopes behind a disclosure; a custom role built by ticking groups (single scopes under
// "Advanced"), and deleted once no one holds it.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { roleName } from './i18n.js'
import { groupsOf, heldGroups } from './permissions.js'
import { Field } from './tenant-ui.js'
import { say } from './toast.js'
import { ErrorText, html } from './ui.js'

const ROLE_NAME = /^[a-z][a-z0-9_-]{0,39}$/

/** The role's description in the person's language: a built-in role's from the catalogue. */
const describe = (role, t) => {
  const key = `role_about.${role.name}`
  const said = t(key)
  return role.builtin && said !== key ? said : role.description
}

function RoleCard({ role, t, lang, mayRole, done }) {
  const groups = heldGroups(role.permissions)
  return html`<li class="card role-card" data-role=${role.name}>
    <h3>${roleName(role.name, lang)} <small class="badge">${t(role.builtin ? 'roles.builtin' : 'roles.custom')}</small></h3>
    ${describe(role, t) ? html`<p>${describe(role, t)}</p>` : null}
    <p class="hint">${t('perm.holders', { n: role.members })}</p>
    <ul class="perm-groups">${groups.map(
      (
        g,
      ) => html`<li key=${g.key}><strong>${t(`perm.${g.key}`)}</strong>${g.held === 'some' ? html` <small>${t('perm.partly', { n: g.n, of: g.of })}</small>` : null}
        <br /><small>${t(`perm.${g.key}.about`)}</small></li>`,
    )}</ul>
    <details><summary>${t('perm.exact')}</summary>
      <p class="perms">${role.permissions.map((p) => html`<code key=${p} dir="ltr">${p}</code> `)}</p></details>
    ${mayRole ? html`<${DeleteRole} role=${role} t=${t} lang=${lang} done=${done} />` : null}
  </li>`
}

export function RoleCards({ roles, t, lang, mayRole, done }) {
  return html`<ul class="cards roles" data-testid="roles">${roles.map(
    (r) => html`<${RoleCard} key=${r.name} role=${r} t=${t} lang=${lang} mayRole=${mayRole} done=${done} />`,
  )}</ul>`
}

/** A group's box: ticked when all its scopes are chosen, half-ticked (mixed) when some are. */
function GroupBox({ group, scopes, chosen, setChosen, t }) {
  const n = scopes.filter((s) => chosen.has(s)).length
  const toggle = () => {
    const next = new Set(chosen)
    for (const s of scopes) {
      if (n === scopes.length) next.delete(s)
      else next.add(s)
    }
    setChosen(next)
  }
  return html`<label class="check group-check">
    <input type="checkbox" checked=${n === scopes.length} aria-checked=${n > 0 && n < scopes.length ? 'mixed' : undefined}
      ref=${(el) => {
        if (el) el.indeterminate = n > 0 && n < scopes.length
      }} onChange=${toggle} />
    <span><strong>${t(`perm.${group}`)}</strong><br /><small>${t(`perm.${group}.about`)}</small></span>
  </label>`
}

export function RoleForm({ me, t, done }) {
  const groups = groupsOf(me.organization.permissions)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [chosen, setChosen] = useState(() => new Set())
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const fields = useFieldProblems()
  const toggle = (p) => {
    const next = new Set(chosen)
    if (next.has(p)) next.delete(p)
    else next.add(p)
    setChosen(next)
  }
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      fields.check({
        'role-name': ROLE_NAME.test(name) ? null : t('perm.name_rule'),
        'role-groups': chosen.size > 0 ? null : t('perm.pick_one'),
      })
    } catch {
      return
    }
    setBusy(true)
    try {
      const saved = await api('PUT', '/v1/roles', {
        name,
        permissions: [...chosen],
        ...(description ? { description } : {}),
      })
      say(t(saved.created ? 'perm.role_made' : 'perm.role_changed', { name }))
      setName('')
      setDescription('')
      setChosen(new Set())
      await done()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  // no one grants what they lack: the choices are the member's own permissions
  return html`<form class="card" data-testid="role-form" novalidate onSubmit=${submit}>
    <h2>${t('roles.new')}</h2>
    <${Field} id="role-name" label=${t('roles.name')} value=${name} onInput=${setName} required=${true} fields=${fields} />
    <${Field} id="role-description" label=${t('roles.description')} value=${description} onInput=${setDescription} />
    <fieldset class="permissions" id="role-groups" tabindex="-1" ...${fields.at('role-groups')}>
      <legend>${t('perm.what_may')}</legend>
      ${groups.map(
        ([group, scopes]) =>
          html`<${GroupBox} key=${group} group=${group} scopes=${scopes} chosen=${chosen} setChosen=${setChosen} t=${t} />`,
      )}
      ${fields.note('role-groups')}
      <details class="advanced"><summary>${t('perm.advanced')}</summary>
        <p class="hint">${t('perm.advanced_hint')}</p>
        ${groups.map(
          ([group, scopes]) => html`<div key=${group} role="group" aria-label=${t(`perm.${group}`)}>
            <p><strong>${t(`perm.${group}`)}</strong></p>
            ${scopes.map(
              (p) => html`<label key=${p} class="check"><input type="checkbox" checked=${chosen.has(p)}
                onChange=${() => toggle(p)} /> <code dir="ltr">${p}</code></label>`,
            )}</div>`,
        )}
      </details>
    </fieldset>
    <button type="submit" class="primary" disabled=${busy}>${busy ? t('roles.saving') : t('roles.save')}</button>
    <${ErrorText} error=${error} t=${t} />
  </form>`
}

/** A custom role's delete control: asked first, refused while members or invitations hold it. */
function DeleteRole({ role, t, lang, done }) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  if (role.builtin) return null
  if (role.members > 0) return html`<small class="hint">${t('roles.held', { n: role.members })}</small>`
  const remove = async () => {
    setBusy(true)
    setError(null)
    try {
      await api('DELETE', `/v1/roles/${encodeURIComponent(role.name)}`)
      // the inverse: the same role made again, with its permissions and description
      say(t('perm.role_deleted', { name: roleName(role.name, lang) }), async () => {
        await api('PUT', '/v1/roles', {
          name: role.name,
          permissions: role.permissions,
          ...(role.description ? { description: role.description } : {}),
        })
        await done()
      })
      await done()
    } catch (err) {
      setError(err)
      setAsking(false)
    } finally {
      setBusy(false)
    }
  }
  return html`<div data-testid=${`delete-role-${role.name}`}>
    ${
      asking
        ? html`<p role="group" aria-label=${t('roles.confirm_delete', { name: role.name })}>
            ${t('roles.confirm_delete', { name: role.name })}${' '}
            <button type="button" class="danger" disabled=${busy} onClick=${remove}>${busy ? t('roles.deleting') : t('roles.delete_yes')}</button>${' '}
            <button type="button" disabled=${busy} onClick=${() => setAsking(false)}>${t('roles.delete_no')}</button></p>`
        : html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${t('roles.delete')}</button>`
    }
    <${ErrorText} error=${error} t=${t} /></div>`
}
