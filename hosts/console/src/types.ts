import type { Schema } from '../../client/api-client.ts';

/** The API's answers the console reads, as the generated client names them. */
export type Scope = Schema<'TokenOut'>['scopes'][number];
export type Node = Schema<'NodeOut'>;
export type GpuSearch = Schema<'GpuSearchOut'>;
export type MarketSummary = Schema<'MarketSummaryOut'>;
export type Instance = Schema<'InstanceOut'>;
export type Account = Schema<'AccountOut'>;
export type LedgerEntry = Schema<'LedgerEntryOut'>;
export type Deposit = Schema<'DepositOut'>;
export type Token = Schema<'TokenOut'>;
export type TokenCreated = Schema<'TokenCreatedOut'>;
export type SshKey = Schema<'SSHKeyOut'>;
export type Image = Schema<'ImageOut'>;
export type Template = Schema<'TemplateOut'>;
export type Volume = Schema<'VolumeOut'>;
export type Reservation = Schema<'ReservationOut'>;
export type SpotClaim = Schema<'SpotClaimOut'>;
export type SignedIn = Schema<'IdpExchangeOut'>;
export type DeviceStart = Schema<'DeviceStartOut'>;
export type Identity = Schema<'IdentityOut'>;
export type TokenSelf = Schema<'TokenSelfOut'>;
export type Role = Schema<'IdentityOut'>['role'];
export type Invitation = Schema<'InvitationOut'>;
