/**
 * `npm run build`: every service's production bundle (services/<name>/.build/main.mjs, as
 * `npm start` makes them), for the container image (Dockerfile): plain Node runs them.
 */
import { SERVICE_NAMES } from '../packages/kit/src/topology.ts'
import { bundleService } from './build.ts'

for (const name of SERVICE_NAMES) console.log(await bundleService(name))
