// Members (added by email with a role) and roles (built-in ones, and the organization's custom
// ones made here as named sets of permissions, deleted once no one holds them). Write controls
// show only to roles that may write.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { roleName } from './i18n.js'
import { Field, Loaded } from './tenant-ui.js'
import { allowed, ErrorText, html, useLoad, When } from './ui.js'
import { Pager, usePaged } from './paging.js'

function AddMember({ roles, t, lang, done }) {
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const [added, setAdded] = useState('')
  const fields = useFieldProblems()
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      fields.check({
        'member-email': /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()) ? null : t('field.email'),
      })
    } catch {
      return
    }
    setBusy(true)
    try {
      await api('POST', '/v1/users', { email: email.trim(), role })
      setAdded(email)
      setEmail('')
      await done()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="card" data-testid="add-member" novalidate onSubmit=${submit}>
    <h2>${t('members.add')}</h2>
    <${Field} id="member-email" type="email" label=${t('members.email')} value=${email} onInput=${setEmail}
      required=${true} autocomplete="off" fields=${fields} />
    <p class="field"><label for="member-role">${t('members.role')}</label>
      <select id="member-role" value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
        ${roles.map((r) => html`<option key=${r.name} value=${r.name}>${roleName(r.name, lang)}</option>`)}
      </select></p>
    <button type="submit" disabled=${busy}>${busy ? t('members.adding') : t('members.add')}</button>
    <${ErrorText} error=${error} t=${t} />
    ${added ? html`<p class="ok" role="status">${t('members.added', { email: added })}</p>` : null}
  </form>`
}

function RoleForm({ me, t, done }) {
  const mine = me.organization.permissions
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [chosen, setChosen] = useState(() => new Set())
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const [saved, setSaved] = useState('')
  const toggle = (p) => {
    const next = new Set(chosen)
    if (next.has(p)) next.delete(p)
    else next.add(p)
    setChosen(next)
  }
  const submit = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await api('PUT', '/v1/roles', {
        name,
        permissions: [...chosen],
        ...(description ? { description } : {}),
      })
      setSaved(name)
      await done()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  // no one grants what they lack: the choices are the member's own permissions
  return html`<form class="card" data-testid="role-form" onSubmit=${submit}>
    <h2>${t('roles.new')}</h2>
    <${Field} id="role-name" label=${t('roles.name')} value=${name} onInput=${setName} required=${true} />
    <${Field} id="role-description" label=${t('roles.description')} value=${description} onInput=${setDescription} />
    <fieldset class="permissions"><legend>${t('roles.permissions')}</legend>
      ${mine.map(
        (p) => html`<label key=${p} class="check"><input type="checkbox" checked=${chosen.has(p)}
          onChange=${() => toggle(p)} /> <code dir="ltr">${p}</code></label>`,
      )}
    </fieldset>
    <button type="submit" disabled=${busy}>${busy ? t('roles.saving') : t('roles.save')}</button>
    <${ErrorText} error=${error} t=${t} />
    ${saved ? html`<p class="ok" role="status">${t('roles.saved', { name: saved })}</p>` : null}
  </form>`
}

/** A custom role's delete control: asked twice, refused while members or invitations hold it. */
function DeleteRole({ role, t, done }) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  if (role.builtin) return null
  if (role.members > 0) return html`<small class="hint">${t('roles.held', { n: role.members })}</small>`
  const remove = async () => {
    setBusy(true)
    setError(null)
    try {
      await api('DELETE', `/v1/roles/${encodeURIComponent(role.name)}`)
      await done()
    } catch (err) {
      setError(err)
      setAsking(false)
    } finally {
      setBusy(false)
    }
  }
  return html`<span data-testid=${`delete-role-${role.name}`}>
    ${
      asking
        ? html`<span role="group" aria-label=${t('roles.confirm_delete', { name: role.name })}>
            ${t('roles.confirm_delete', { name: role.name })}${' '}
            <button type="button" class="danger" disabled=${busy} onClick=${remove}>${busy ? t('roles.deleting') : t('roles.delete_yes')}</button>${' '}
            <button type="button" disabled=${busy} onClick=${() => setAsking(false)}>${t('roles.delete_no')}</button></span>`
        : html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${t('roles.delete')}</button>`
    }
    <${ErrorText} error=${error} t=${t} /></span>`
}

export function Members({ me, t, lang }) {
  const members = usePaged('/v1/users', { field: 'members' })
  const roles = useLoad('/v1/roles')
  const mayInvite = allowed(me, 'members:write')
  const mayRole = allowed(me, 'roles:write')
  return html`<h1>${t('members.title')}</h1>
    ${mayInvite || mayRole ? null : html`<p class="hint" data-testid="readonly">${t('readonly')}</p>`}
    <${Loaded} load=${members} rows=${members.data?.members} t=${t} empty=${t('members.empty')}>
      ${(rows) => html`<table class="list" data-testid="members">
        <thead><tr><th>${t('members.email')}</th><th>${t('members.role')}</th><th>${t('members.state')}</th>
          <th>${t('col.created')}</th></tr></thead>
        <tbody>${rows.map(
          (m) => html`<tr key=${m.id}>
            <td><bdi>${m.email ?? m.subject}</bdi></td>
            <td>${roleName(m.role, lang)}</td>
            <td>${t(m.state === 'joined' ? 'members.joined' : 'members.invited')}</td>
            <td><${When} iso=${m.created_at} lang=${lang} /></td>
          </tr>`,
        )}</tbody>
      </table>
      <${Pager} page=${members.page} t=${t} lang=${lang} />`}
    <//>
    ${
      mayInvite && roles.data
        ? html`<${AddMember} roles=${roles.data.roles} t=${t} lang=${lang} done=${members.reload} />`
        : null
    }
    <h2>${t('roles.title')}</h2>
    <${Loaded} load=${roles} rows=${roles.data?.roles} t=${t} empty="">
      ${(rows) => html`<table class="list" data-testid="roles">
        <thead><tr><th>${t('col.name')}</th><th>${t('roles.holders')}</th><th>${t('roles.permissions')}</th>
          ${mayRole ? html`<th>${t('roles.actions')}</th>` : null}</tr></thead>
        <tbody>${rows.map(
          (r) => html`<tr key=${r.name}>
            <td>${roleName(r.name, lang)} <small>${t(r.builtin ? 'roles.builtin' : 'roles.custom')}</small>
              <br /><small dir="auto">${r.description}</small></td>
            <td>${r.members}</td>
            <td class="perms">${r.permissions.map((p) => html`<code key=${p} dir="ltr">${p}</code> `)}</td>
            ${mayRole ? html`<td><${DeleteRole} role=${r} t=${t} done=${roles.reload} /></td>` : null}
          </tr>`,
        )}</tbody>
      </table>`}
    <//>
    ${mayRole ? html`<${RoleForm} me=${me} t=${t} done=${roles.reload} />` : null}`
}
