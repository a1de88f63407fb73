/** The package's public surface, for programs that embed the control plane. */
export { createControlPlane } from './hosts/composition/control-plane.ts';
export type { ControlPlane, ControlPlaneOverrides, ControlPlaneServices } from './hosts/composition/control-plane.ts';
export { configFromEnv, ConfigError } from './hosts/composition/config.ts';
export type { ControlPlaneConfig, ServerConfig } from './hosts/composition/config.ts';
export { createHttpApp } from './hosts/http/app.ts';
export { ManualClock } from './adapters/clock/manual-clock.ts';
export { DomainError } from './core/errors.ts';
export type { ErrorCode } from './core/errors.ts';
export { formatUsd, parseUsd } from './core/money.ts';
