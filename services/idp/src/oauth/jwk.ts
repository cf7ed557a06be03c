/** RFC 7517/7518: the members that make a JWK private (or symmetric); a public key has none. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

export const hasPrivateMembers = (jwk: object) => PRIVATE_MEMBERS.some((member) => member in jwk)
