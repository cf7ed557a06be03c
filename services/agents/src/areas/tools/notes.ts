import { createHash, randomBytes, randomUUID } from 'node:crypto'

/** What a key may do: `read` lists and reads notes; `write` also creates and deletes them. */
export type NoteScope = 'read' | 'write'

export interface Note {
  id: string
  title: string
  body: string
  created_at: string
}

interface Notebook {
  id: string
  notes: Map<string, Note>
}

const MAX_NOTES = 500
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * The demo tool server's data: notebooks in memory, each reached by API keys (kept as their
 * SHA-256 only; a key is shown once, when made). Bounded: past `maxNotebooks` the oldest is
 * forgotten (its keys stop working), and a notebook holds at most 500 notes.
 */
export class NoteStore {
  readonly #keys = new Map<string, { notebook: Notebook; scope: NoteScope }>()
  readonly #notebooks = new Map<string, Notebook>()

  constructor(readonly maxNotebooks = 1000) {}

  /** A new notebook (or, with `notebookId`, another key of one) and its key, shown once. */
  newKey(scope: NoteScope, notebookId?: string): { key: string; notebook_id: string } | undefined {
    let notebook = notebookId === undefined ? undefined : this.#notebooks.get(notebookId)
    if (notebookId !== undefined && !notebook) return undefined
    if (!notebook) {
      notebook = { id: `nb_${randomBytes(9).toString('base64url')}`, notes: new Map() }
      this.#notebooks.set(notebook.id, notebook)
      while (this.#notebooks.size > this.maxNotebooks) this.#forget(this.#notebooks.keys().next().value!)
    }
    const key = `nk_${scope}_${randomBytes(24).toString('base64url')}`
    this.#keys.set(sha256(key), { notebook, scope })
    return { key, notebook_id: notebook.id }
  }

  #forget(id: string) {
    this.#notebooks.delete(id)
    for (const [hash, entry] of this.#keys) if (entry.notebook.id === id) this.#keys.delete(hash)
  }

  /** The notebook of an idp client (its tokens' `client_id`), made on first use; tokens may write. */
  openForClient(clientId: string): { notebook: Notebook; scope: NoteScope } {
    const id = `nb_client_${sha256(clientId).slice(0, 16)}`
    let notebook = this.#notebooks.get(id)
    if (!notebook) {
      notebook = { id, notes: new Map() }
      this.#notebooks.set(id, notebook)
      while (this.#notebooks.size > this.maxNotebooks) this.#forget(this.#notebooks.keys().next().value!)
    }
    return { notebook, scope: 'write' }
  }

  /** The notebook and scope a key opens (looked up by its hash), or undefined. */
  open(key: string): { notebook: Notebook; scope: NoteScope } | undefined {
    return this.#keys.get(sha256(key))
  }
}

export function listNotes(notebook: Notebook, query: string | undefined, limit: number): Note[] {
  const q = query?.toLowerCase()
  return [...notebook.notes.values()]
    .filter((n) => !q || n.title.toLowerCase().includes(q) || n.body.toLowerCase().includes(q))
    .slice(-limit)
    .reverse()
}

export function createNote(notebook: Notebook, title: string, body: string): Note | 'full' {
  if (notebook.notes.size >= MAX_NOTES) return 'full'
  const note = { id: `note_${randomUUID()}`, title, body, created_at: new Date().toISOString() }
  notebook.notes.set(note.id, note)
  return note
}

export const deleteNote = (notebook: Notebook, id: string): boolean => notebook.notes.delete(id)
