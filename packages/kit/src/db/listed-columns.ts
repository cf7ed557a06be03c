import {
  AliasNode,
  ColumnNode,
  DeleteQueryNode,
  IdentifierNode,
  InsertQueryNode,
  type Kysely,
  type KyselyPlugin,
  type OperationNode,
  type RawBuilder,
  ReferenceNode,
  ReturningNode,
  SelectAllNode,
  SelectionNode,
  SelectQueryNode,
  sql,
  TableNode,
  UpdateQueryNode,
} from 'kysely'

/**
 * `selectAll()` and `returningAll()` written out as the table's columns (PostgreSQL).
 *
 * A statement with `*` cannot be kept as a named prepared statement inside a transaction
 * (`pg-pool.ts`): a column added by another instance's migration changes its result type and
 * PostgreSQL then refuses the kept plan, losing the transaction. Listed, the statement keeps its
 * result type, so it is named and planned once per connection like the others. The columns are
 * this schema's as the process last read them: at open, and again after each migration it applies
 * (`schemaChanged`), before which nothing is listed. A column another instance adds later is not
 * selected, and this process's code does not know it either.
 *
 * Only what is unambiguous is listed: `*` of a query on one table (aliased or not, without joins,
 * `with` or set operations), and `alias.*` of any table in the query's `from` or joins. Anything
 * else keeps its `*` and runs unnamed inside transactions, as before.
 */
export class ListedColumns implements KyselyPlugin {
  private columns = new Map<string, readonly string[]>()
  private selections = new Map<string, readonly SelectionNode[]>()
  private generation = 0

  constructor(private readonly schema: string) {}

  /** Reads the schema's columns again; until then nothing is listed. */
  async load(db: Kysely<unknown>): Promise<void> {
    const mine = ++this.generation
    this.columns = new Map()
    this.selections = new Map()
    // the catalogue rather than information_schema: one join, a few milliseconds; the schema's name
    // (checked by openDatabase) as a literal: a statement run once is not kept prepared
    const rows = await sql<{ table_name: string; column_name: string }>`
      select c.relname as table_name, a.attname as column_name
      from pg_catalog.pg_attribute a
      join pg_catalog.pg_class c on c.oid = a.attrelid
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${sql.lit(this.schema)} and c.relkind in ('r', 'p', 'v', 'm', 'f')
        and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`
      .execute(db)
      .then((r) => r.rows)
      .catch(() => [])
    if (mine !== this.generation) return
    const columns = new Map<string, string[]>()
    for (const { table_name, column_name } of rows) {
      const list = columns.get(table_name) ?? []
      list.push(column_name)
      columns.set(table_name, list)
    }
    this.columns = columns
  }

  transformQuery({ node }: { node: OperationNode }) {
    if (this.columns.size === 0) return node as never
    return this.transformStatement(node) as never
  }

  /** The table's columns as this process knows them; undefined before they are read, or for another schema's. */
  columnsOf(table: string): readonly string[] | undefined {
    return this.columns.get(table)
  }

  private transformStatement(node: OperationNode): OperationNode {
    if (SelectQueryNode.is(node)) {
      if (!node.selections?.some(hasStar) || node.with || node.setOperations) return node
      const froms = [...(node.from?.froms ?? []), ...(node.joins ?? []).map((j) => j.table)]
      const single = !node.joins?.length && froms.length === 1
      const selections = this.expand(node.selections, froms, single)
      return selections ? ({ ...node, selections } as SelectQueryNode) : node
    }
    const returning = (node as { returning?: ReturningNode }).returning
    if (!returning?.selections.some(hasStar) || (node as { with?: unknown }).with) return node
    let froms: OperationNode[] = []
    let single = false
    if (InsertQueryNode.is(node) && node.into) [froms, single] = [[node.into], true]
    else if (UpdateQueryNode.is(node) && node.table) {
      froms = [node.table, ...(node.from?.froms ?? []), ...(node.joins ?? []).map((j) => j.table)]
      single = froms.length === 1
    } else if (DeleteQueryNode.is(node)) {
      froms = [...node.from.froms, ...(node.joins ?? []).map((j) => j.table)]
      single = froms.length === 1 && !node.using
    }
    const selections = this.expand(returning.selections, froms, single)
    return selections ? ({ ...node, returning: ReturningNode.create(selections) } as OperationNode) : node
  }

  transformResult<R>({ result }: { result: R }): Promise<R> {
    return Promise.resolve(result)
  }

  /** The selections with each `*` this can name written out; undefined when none could be. */
  private expand(
    selections: readonly SelectionNode[],
    froms: readonly OperationNode[],
    single: boolean,
  ): SelectionNode[] | undefined {
    let changed = false
    const out: SelectionNode[] = []
    for (const selection of selections) {
      const star = selection.selection
      let listed: readonly SelectionNode[] | undefined
      if (SelectAllNode.is(star) && single) listed = this.listed(tableOf(froms[0]!)?.name)
      else if (ReferenceNode.is(star) && SelectAllNode.is(star.column) && star.table) {
        const qualifier = star.table.table.identifier.name
        const match = froms.map(tableOf).find((t) => t?.alias === qualifier)
        if (match && !star.table.table.schema) listed = this.listed(match.name, star.table)
      }
      if (listed) {
        out.push(...listed)
        changed = true
      } else out.push(selection)
    }
    return changed ? out : undefined
  }

  private listed(table: string | undefined, qualifier?: TableNode): readonly SelectionNode[] | undefined {
    if (!table) return
    const key = qualifier ? `${qualifier.table.identifier.name}.${table}` : table
    let listed = this.selections.get(key)
    if (!listed) {
      const columns = this.columns.get(table)
      if (!columns) return
      listed = columns.map((c) =>
        SelectionNode.create(
          qualifier ? ReferenceNode.create(ColumnNode.create(c), qualifier) : ColumnNode.create(c),
        ),
      )
      this.selections.set(key, listed)
    }
    return listed
  }
}

const hasStar = (s: SelectionNode) =>
  SelectAllNode.is(s.selection) || (ReferenceNode.is(s.selection) && SelectAllNode.is(s.selection.column))

/** A table of this schema in a from or join: its name and the name it is referred to by. */
function tableOf(node: OperationNode): { name: string; alias: string } | undefined {
  const [table, alias] = AliasNode.is(node) ? [node.node, node.alias] : [node, undefined]
  if (!TableNode.is(table) || table.table.schema) return
  const name = table.table.identifier.name
  if (alias === undefined) return { name, alias: name }
  return IdentifierNode.is(alias) ? { name, alias: alias.name } : undefined
}

/**
 * For raw SQL: `*` of `table` (or `alias.*`) as the columns `db` writes it out as, each quoted, so
 * the statement can be kept prepared; `*` itself where they are not known (PGlite, prepared
 * statements off, before they are read).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any service's database
export function columnsOf(db: Kysely<any>, table: string, alias?: string): RawBuilder<unknown> {
  const listed = db
    .getExecutor()
    .plugins.find((p): p is ListedColumns => p instanceof ListedColumns)
    ?.columnsOf(table)
  if (!listed) return alias ? sql`${sql.id(alias)}.*` : sql`*`
  return sql.join(listed.map((c) => (alias ? sql.id(alias, c) : sql.id(c))))
}

/**
 * The column names a builder's insert, update or delete returns, when each is a plain column (as
 * `returningAll()` is once written out: a builder's node is already through the plugins); undefined
 * for `*` or an expression.
 */
export function returnedColumns(node: OperationNode): string[] | undefined {
  const selections = (node as { returning?: ReturningNode }).returning?.selections
  if (!selections?.length) return undefined
  const names: string[] = []
  for (const { selection } of selections) {
    const column = ReferenceNode.is(selection) ? selection.column : selection
    if (!ColumnNode.is(column)) return undefined
    names.push(column.column.name)
  }
  return names
}
