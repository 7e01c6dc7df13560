/**
 * The SDK side of the Effect 4 edition's measurements, through its public API only. The edition
 * has no event channel yet (`EventStream`, `AgentSessions`, `NodeAgentSessions`): until it does,
 * every SDK measurement fails with this message and the report says so.
 */
import type { FiberCount, FirstEventOptions, FirstEventResult, HoldResult, ThroughputResult } from "../../../bench/measure.js"

const missing = (): Promise<never> =>
  Promise.reject(new Error("the Effect 4 edition has no EventStream / AgentSessions yet"))

export const throughput = (_url: string, _n: number): Promise<ThroughputResult> => missing()
export const throughputAttach = (_url: string, _n: number): Promise<ThroughputResult> => missing()
export const hold = (_url: string, _count: number, _concurrency: number): Promise<HoldResult> => missing()
export const countFibers = (_url: string, _count: number, _concurrency: number): Promise<FiberCount> => missing()
export const firstEvent = (
  _baseUrl: string,
  _apiKey: string,
  _request: unknown,
  _options: FirstEventOptions
): Promise<FirstEventResult> => missing()
