/**
 * A runner's engine over `NodeClusterSocket`: `@effect/cluster`'s `SocketRunner`, with health by
 * ping (the given detection, `health.ts`) and every runner watching the others.
 * `NodeClusterSessions.layerRunner` builds its runners on it, and packages/cluster/bench/clusterFloor.ts the
 * floor it measures the take-over against (the same engine, with no session in it).
 */
import * as Runners from "@effect/cluster/Runners"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as AuthSocket from "./authSocket.js"
import { health, type PingDetection, watchPeers } from "../../binding/internal/health.js"

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
