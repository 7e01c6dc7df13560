/**
 * A runner's engine over `NodeClusterSocket`: the cluster's `SocketRunner`, with health by ping
 * (the given detection, `health.ts`) and every runner watching the others. Written once for both
 * cluster editions (each line's `SocketRunner` and `NodeClusterSocket` from its `line.ts`, each
 * edition's transport with membership from its `internal/authSocket.ts`).
 * `NodeClusterSessions.layerRunner` builds its runners on it, and packages/cluster/bench/clusterFloor.ts the
 * floor it measures the take-over against (the same engine, with no session in it).
 */
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as AuthSocket from "../../src/internal/authSocket.js"
import { NodeClusterSocket, Runners, SocketRunner } from "../../src/internal/line.js"
import { health, type PingDetection, watchPeers } from "./health.js"

/**
 * With neither a cluster secret nor TLS in `auth` (a runner on loopback), `NodeClusterSocket`'s
 * own server and client; else theirs with the membership handshake (authSocket.ts).
 */
export const socketSharding = (
  detection: PingDetection,
  auth: AuthSocket.Auth = { secrets: [], handshakeTimeout: Duration.seconds(3) }
) => {
  const plain = auth.secrets.length === 0 && auth.tls === undefined
  const clientProtocol = plain ? NodeClusterSocket.layerClientProtocol : AuthSocket.layerClientProtocol(auth)
  const socketServer = plain ? NodeClusterSocket.layerSocketServer : AuthSocket.layerSocketServer(auth)
  const runnerHealth = health(detection).pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(clientProtocol)
  )
  return Layer.merge(
    SocketRunner.layer.pipe(
      Layer.provide([socketServer, clientProtocol]),
      Layer.provide(runnerHealth)
    ),
    watchPeers.pipe(Layer.provide(runnerHealth))
  )
}
