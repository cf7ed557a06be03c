import assert from 'node:assert/strict'
import { appendLeaves, type Hash, type HashReader, type NodeId } from './merkle.ts'

/** Test support: an in-memory log storing every complete subtree keyed "level/index", as the ledger does, counting reads. */
export class MemoryLog {
  readonly nodes = new Map<string, Hash>()
  size = 0
  calls = 0
  nodesRead = 0

  /** A reader for the tree of `size` leaves: it refuses nodes that are not complete in that tree. */
  reader(size = this.size): HashReader {
    return async (ids: NodeId[]) => {
      this.calls++
      this.nodesRead += ids.length
      return ids.map(({ level, index }) => {
        const hash = this.nodes.get(`${level}/${index}`)
        if (hash === undefined || (index + 1) * 2 ** level > size) throw new Error(`read ${level}/${index}`)
        return hash
      })
    }
  }

  /** Appends through appendLeaves, checking no node is emitted twice. */
  async append(leaves: Hash[]): Promise<void> {
    for (const node of await appendLeaves(this.size, leaves, this.reader())) {
      const key = `${node.level}/${node.index}`
      assert.ok(!this.nodes.has(key), `node ${key} emitted twice`)
      this.nodes.set(key, node.hash)
    }
    this.size += leaves.length
  }

  resetCounts(): void {
    this.calls = 0
    this.nodesRead = 0
  }
}
