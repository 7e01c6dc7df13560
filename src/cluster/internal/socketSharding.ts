/**
 * A runner's engine over `NodeClusterSocket`: `@effect/cluster`'s `SocketRunner`, with health by
 * ping (the given detection, `health.ts`) and every runner watching the others.
 * `NodeClusterSessions.layerRunner` builds its runners on it, and bench/clusterFloor.ts the
 * floor it measures the take-over against (the same engine, with no session in it).
 */
import * as Runners from "@effect/cluster/Runners"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as Layer from "effect/Layer"
import { health, type PingDetection, watchPeers } from "./health.js"

export const socketSharding = (detection: PingDetection) => {
  const runnerHealth = health(detection).pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol)
  )
  return Layer.merge(
    SocketRunner.layer.pipe(
      Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
      Layer.provide(runnerHealth)
    ),
    watchPeers.pipe(Layer.provide(runnerHealth))
  )
}
