/**
 * GPU families, most specific first: "GH200" before "H200", "L40S" before "L40" before "L4",
 * "A100" before "A10". A model name is matched against its compact upper-case form.
 */
const FAMILIES: readonly { family: string; pattern: RegExp }[] = [
  { family: 'GB200', pattern: /GB200/ },
  { family: 'B200', pattern: /B200/ },
  { family: 'B300', pattern: /B300/ },
  { family: 'GH200', pattern: /GH200/ },
  { family: 'H200', pattern: /H200/ },
  { family: 'H100', pattern: /H100/ },
  { family: 'A100', pattern: /A100/ },
  { family: 'A10G', pattern: /A10G/ },
  { family: 'A10', pattern: /A10(?!\d)/ },
  { family: 'A16', pattern: /A16(?!\d)/ },
  { family: 'A30', pattern: /A30(?!\d)/ },
  { family: 'A40', pattern: /A40(?!\d)/ },
  { family: 'L40S', pattern: /L40S/ },
  { family: 'L40', pattern: /L40(?!\d)/ },
  { family: 'L4', pattern: /L4(?!\d)/ },
  { family: 'RTXPRO6000', pattern: /RTXPRO6000/ },
  { family: 'RTX6000ADA', pattern: /(RTX)?6000ADA/ },
  { family: 'A6000', pattern: /A6000/ },
  { family: 'A5000', pattern: /A5000/ },
  { family: 'A4000', pattern: /A4000/ },
  { family: 'RTX5090', pattern: /(RTX)?5090/ },
  { family: 'RTX5080', pattern: /(RTX)?5080/ },
  { family: 'RTX4090', pattern: /(RTX)?4090/ },
  { family: 'RTX4080', pattern: /(RTX)?4080/ },
  { family: 'RTX4070', pattern: /(RTX)?4070/ },
  { family: 'RTX3090', pattern: /(RTX)?3090/ },
  { family: 'RTX3080', pattern: /(RTX)?3080/ },
  { family: 'RTX3070', pattern: /(RTX)?3070/ },
  { family: 'RTX3060', pattern: /(RTX)?3060/ },
  { family: 'V100', pattern: /V100/ },
  { family: 'P100', pattern: /P100/ },
  { family: 'T4', pattern: /T4(?!\d)/ },
  { family: 'MI300X', pattern: /MI300X/ },
  { family: 'MI250', pattern: /MI250/ },
];

const compact = (name: string): string =>
  name
    .toUpperCase()
    .replace(/NVIDIA|GEFORCE|TESLA|AMD|INSTINCT/g, '')
    .replace(/[^A-Z0-9]/g, '');

/**
 * The family of a GPU model name as any provider spells it: "NVIDIA H100 80GB HBM3" -> "H100",
 * "RTX 4090" -> "RTX4090", "NVIDIA RTX 6000 Ada Generation" -> "RTX6000ADA". Unknown models keep
 * their compact upper-case name, so they still group consistently.
 */
export function gpuFamily(modelName: string): string {
  const key = compact(modelName);
  return FAMILIES.find(({ pattern }) => pattern.test(key))?.family ?? (key || 'UNKNOWN');
}
