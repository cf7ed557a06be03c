/** Real inputs shared by the skill tests and the A2A tests. */

export const PARAGRAPH = `The ledger records every receipt the platform issues. Each receipt is a leaf in a Merkle tree, and the tree's root is signed in a checkpoint. Witnesses co-sign the checkpoints, so a log that forks is caught. Clients verify a receipt offline with its inclusion proof and a signed checkpoint. The weather in Dubai was hot. Dr. Smith said receipts and checkpoints make the ledger auditable.`

export const EMAIL = `From: Layla Haddad <layla@example.ae>
To: accounts@vendor.co.uk
Subject: Payment for invoice INV-2041

Hello, please pay AED 12,500.00 by 2025-03-31 (31/03/2025 at the latest) to IBAN GB82 WEST 1234 5698 7654 32.
The deposit of 2,000 AED was received on 12 March 2025; the fee of $45.5 on March 3, 2025.
Do not use GB82WEST12345698765433. Not a date: 31/02/2025. Copy to Layla@Example.ae.`

export const INVOICE = `INVOICE 1042 - Desert Logistics LLC
2 x Pallet wrapping @ AED 150.00 = AED 300.00
3 × Forklift hour at 200.00 = 650.00
Delivery fee 1 x 75.50 75.50
Subtotal: AED 1,025.50
VAT 5%: AED 51.28
Total: AED 1,076.78`
