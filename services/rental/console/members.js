// @ts-check
// Members (added by email with a role; their role changed or they removed, each asked first and
// confirmed after) and roles (roles.js: described in words, custom ones built from groups). Write
// controls show only to roles that may write; the API refuses anyway.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { roleName } from './i18n.js'
import { RoleCards, RoleForm } from './roles.js'
import { Field, Loaded } from './tenant-ui.js'
import { say } from './toast.js'
import { allowed, ErrorText, html, useLoad, When } from './ui.js'
import { Pager, usePaged } from './paging.js'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

function AddMember({ roles, t, lang, done }) {
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const fields = useFieldProblems()
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      fields.check({ 'member-email': EMAIL.test(email.trim()) ? null : t('field.email') })
    } catch {
      return
    }
    setBusy(true)
    try {
      const added = await api('POST', '/v1/users', { email: email.trim(), role })
      say(t('members.added', { email: email.trim() }), async () => {
        await api('DELETE', `/api/org/members/${encodeURIComponent(added.id)}`)
        await done()
      })
      setEmail('')
      await done()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="card" data-testid="add-member" id="add-member" novalidate onSubmit=${submit}>
    <h2>${t('members.add')}</h2>
    <${Field} id="member-email" type="email" label=${t('members.email')} value=${email} onInput=${setEmail}
      required=${true} autocomplete="off" fields=${fields} />
    <p class="field"><label for="member-role">${t('members.role')}</label>
      <select id="member-role" value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
        ${roles.map((r) => html`<option key=${r.name} value=${r.name}>${roleName(r.name, lang)}</option>`)}
      </select></p>
    <button type="submit" class="primary" disabled=${busy}>${busy ? t('members.adding') : t('members.add')}</button>
    <${ErrorText} error=${error} t=${t} />
  </form>`
}

const who = (m) => m.email ?? m.subject

/** A member's controls: a new role (asked, then said, with an undo) and removal (asked, then said). */
function MemberActions({ member, roles, mayOwners, t, lang, done }) {
  const [role, setRole] = useState(member.role)
  const [asking, setAsking] = useState(/** @type {'role' | 'remove' | null} */ (null))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const choices = roles.filter((r) => mayOwners || (r.name !== 'owner' && member.role !== 'owner'))
  const setRoleOf = (to) =>
    api('POST', `/api/org/members/${encodeURIComponent(member.id)}/role`, { role: to })
  const run = async (what) => {
    setBusy(true)
    setError(null)
    try {
      if (what === 'role') {
        const from = member.role
        await setRoleOf(role)
        say(t('member.role_changed', { who: who(member), role: roleName(role, lang) }), async () => {
          await setRoleOf(from)
          await done()
        })
      } else {
        await api('DELETE', `/api/org/members/${encodeURIComponent(member.id)}`)
        // an invitation comes back as the same invitation; a joined member's sessions ended: no undo
        const again =
          member.state === 'invited' && member.email
            ? async () => {
                await api('POST', '/v1/users', { email: member.email, role: member.role })
                await done()
              }
            : undefined
        say(
          t(member.state === 'invited' ? 'member.invite_removed' : 'member.removed', { who: who(member) }),
          again,
        )
      }
      setAsking(null)
      await done()
    } catch (err) {
      setError(err)
      setAsking(null)
    } finally {
      setBusy(false)
    }
  }
  const id = `role-of-${member.id}`
  if (asking)
    return html`<div role="group" aria-label=${t(`member.confirm_${asking}`, { who: who(member), role: roleName(role, lang) })}>
      <p>${t(`member.confirm_${asking}`, { who: who(member), role: roleName(role, lang) })}</p>
      <button type="button" class=${asking === 'remove' ? 'danger' : 'primary'} disabled=${busy} onClick=${() => run(asking)}>
        ${busy ? t('loading') : t(`member.yes_${asking}`)}</button>${' '}
      <button type="button" disabled=${busy} onClick=${() => setAsking(null)}>${t('member.no')}</button>
    </div>`
  return html`<div class="member-actions">
    ${
      choices.some((r) => r.name === member.role)
        ? html`<label for=${id} class="visually-hidden">${t('member.new_role', { who: who(member) })}</label>
          <select id=${id} value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
            ${choices.map((r) => html`<option key=${r.name} value=${r.name}>${roleName(r.name, lang)}</option>`)}
          </select>
          <button type="button" disabled=${role === member.role} onClick=${() => setAsking('role')}>${t('member.change_role')}</button>`
        : null
    }
    <button type="button" class="danger" onClick=${() => setAsking('remove')}
      aria-label=${t('member.remove_who', { who: who(member) })}>${t('member.remove')}</button>
    <${ErrorText} error=${error} t=${t} />
  </div>`
}

export function Members({ me, t, lang }) {
  const members = usePaged('/v1/users', { field: 'members' })
  const roles = useLoad('/v1/roles')
  const mayInvite = allowed(me, 'members:write')
  const mayRole = allowed(me, 'roles:write')
  const mayOwners = allowed(me, 'members:owners')
  const mine = me.organization.member_id
  const reloadBoth = async () => {
    await Promise.all([members.reload(), roles.reload()])
  }
  return html`<h1>${t('members.title')}</h1>
    ${mayInvite || mayRole ? null : html`<p class="hint" data-testid="readonly">${t('readonly')}</p>`}
    <${Loaded} load=${members} rows=${members.data?.members} t=${t}
      empty=${
        mayInvite
          ? html`${t('member.only_you')} <a href="#add-member" onClick=${(e) => {
              e.preventDefault()
              document.getElementById('member-email')?.focus()
            }}>${t('members.add')}</a>`
          : t('member.only_you_readonly')
      }>
      ${(rows) => html`<table class="list" data-testid="members">
        <thead><tr><th>${t('members.email')}</th><th>${t('members.role')}</th><th>${t('members.state')}</th>
          <th>${t('col.created')}</th>${mayInvite ? html`<th>${t('roles.actions')}</th>` : null}</tr></thead>
        <tbody>${rows.map(
          (m) => html`<tr key=${m.id} data-member=${m.email ?? m.id}>
            <td><bdi>${who(m)}</bdi>${m.id === mine ? html` <small>${t('member.you')}</small>` : null}</td>
            <td>${roleName(m.role, lang)}</td>
            <td>${t(m.state === 'joined' ? 'members.joined' : 'members.invited')}</td>
            <td><${When} iso=${m.created_at} lang=${lang} /></td>
            ${
              mayInvite
                ? html`<td>${
                    m.id === mine || !roles.data
                      ? null
                      : html`<${MemberActions} key=${`${m.id}-${m.role}`} member=${m} roles=${roles.data.roles}
                          mayOwners=${mayOwners} t=${t} lang=${lang} done=${reloadBoth} />`
                  }</td>`
                : null
            }
          </tr>`,
        )}</tbody>
      </table>
      <${Pager} page=${members.page} t=${t} lang=${lang} />`}
    <//>
    ${
      mayInvite && roles.data
        ? html`<${AddMember} roles=${roles.data.roles} t=${t} lang=${lang} done=${reloadBoth} />`
        : null
    }
    <h2>${t('roles.title')}</h2>
    <${Loaded} load=${roles} rows=${roles.data?.roles} t=${t} empty="">
      ${(rows) => html`<${RoleCards} roles=${rows} t=${t} lang=${lang} mayRole=${mayRole} done=${roles.reload} />`}
    <//>
    ${mayRole ? html`<${RoleForm} me=${me} t=${t} done=${roles.reload} />` : null}`
}
