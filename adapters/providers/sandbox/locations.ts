/** Where sandbox hosts sit: ISO alpha-2 countries grouped into cloud-style regions. */
export interface Location {
  country: string;
  region: string;
  /** Relative frequency in the market. */
  weight: number;
}

export const LOCATIONS: readonly Location[] = [
  { country: 'US', region: 'us-east', weight: 14 },
  { country: 'US', region: 'us-central', weight: 9 },
  { country: 'US', region: 'us-west', weight: 10 },
  { country: 'CA', region: 'ca-central', weight: 5 },
  { country: 'BR', region: 'sa-east', weight: 2 },
  { country: 'GB', region: 'eu-west', weight: 4 },
  { country: 'NL', region: 'eu-west', weight: 4 },
  { country: 'FR', region: 'eu-west', weight: 3 },
  { country: 'DE', region: 'eu-central', weight: 6 },
  { country: 'PL', region: 'eu-central', weight: 2 },
  { country: 'CZ', region: 'eu-central', weight: 1 },
  { country: 'SE', region: 'eu-north', weight: 3 },
  { country: 'NO', region: 'eu-north', weight: 2 },
  { country: 'FI', region: 'eu-north', weight: 2 },
  { country: 'IS', region: 'eu-north', weight: 1 },
  { country: 'ES', region: 'eu-south', weight: 1 },
  { country: 'JP', region: 'ap-northeast', weight: 3 },
  { country: 'KR', region: 'ap-northeast', weight: 2 },
  { country: 'TW', region: 'ap-east', weight: 2 },
  { country: 'SG', region: 'ap-southeast', weight: 3 },
  { country: 'AU', region: 'ap-southeast', weight: 2 },
  { country: 'IN', region: 'ap-south', weight: 2 },
];

export const LOCATION_WEIGHTS: readonly (readonly [Location, number])[] = LOCATIONS.map((l) => [l, l.weight]);
