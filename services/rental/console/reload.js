// @ts-check
// Loading a GET again when something the screen did changed it (an answer to a write).
import { useEffect, useRef } from 'preact/hooks'
import { useLoad } from './ui.js'

/** `useLoad(path)`, loaded again each time `key` changes after the first load. */
export function useLoadAgain(path, key) {
  const loaded = useLoad(path)
  const first = useRef(true)
  useEffect(() => {
    if (first.current) first.current = false
    else void loaded.reload()
  }, [key])
  return loaded
}
