/** The demo catalogue (development and tests): jobs of the built-in agents, prices in AED fils. */
export interface SeedJob {
  id: string
  title: string
  profile: string
  outcome: string
  description: string
  /** The same words in Arabic. */
  ar: { title: string; outcome: string; description: string }
  price_fils: number
  /** The agents service's ids of the agents that serve it. */
  agents: string[]
}

export const DEMO_JOBS: SeedJob[] = [
  {
    id: 'job_summary',
    title: 'Document summary',
    profile: 'summariser',
    outcome: 'a short summary of a document',
    description: 'The key points of a report, contract or article, in a few sentences.',
    price_fils: 2_500,
    ar: {
      title: 'ملخص مستند',
      outcome: 'ملخص قصير لمستند',
      description: 'النقاط الرئيسية لتقرير أو عقد أو مقال، في بضع جمل.',
    },
    agents: ['summariser'],
  },
  {
    id: 'job_extraction',
    title: 'Field extraction',
    profile: 'extractor',
    outcome: 'structured fields from a document',
    description: 'Names, dates, amounts and references pulled out as JSON.',
    price_fils: 4_000,
    ar: {
      title: 'استخراج الحقول',
      outcome: 'حقول منظمة من مستند',
      description: 'الأسماء والتواريخ والمبالغ والمراجع مستخرجة بصيغة JSON.',
    },
    agents: ['extractor'],
  },
  {
    id: 'job_invoice_check',
    title: 'Invoice check',
    profile: 'invoice-checker',
    outcome: 'an invoice checked for arithmetic and required fields',
    description: 'Totals, VAT and mandatory fields of an invoice checked, with the problems found.',
    price_fils: 6_000,
    ar: {
      title: 'تدقيق فاتورة',
      outcome: 'فاتورة مدققة حسابيًا ومن حيث الحقول المطلوبة',
      description:
        'المجاميع وضريبة القيمة المضافة والحقول الإلزامية في الفاتورة مدققة، مع المشكلات التي وُجدت.',
    },
    agents: ['invoice-checker'],
  },
  {
    id: 'job_brief',
    title: 'Brief with key facts',
    profile: 'summariser+extractor',
    outcome: 'a summary and the facts it rests on',
    description: 'A summary together with the extracted figures and dates.',
    price_fils: 7_500,
    ar: {
      title: 'موجز بالحقائق الرئيسية',
      outcome: 'ملخص والحقائق التي يستند إليها',
      description: 'ملخص مع الأرقام والتواريخ المستخرجة.',
    },
    agents: ['summariser', 'extractor'],
  },
  {
    id: 'job_invoice_review',
    title: 'Invoice review',
    profile: 'invoice-checker+summariser',
    outcome: 'an invoice checked and explained in plain words',
    description: 'The invoice check, followed by a short explanation for the approver.',
    price_fils: 9_000,
    ar: {
      title: 'مراجعة فاتورة',
      outcome: 'فاتورة مدققة ومشروحة بكلمات بسيطة',
      description: 'تدقيق الفاتورة، يليه شرح قصير لمن يعتمدها.',
    },
    agents: ['invoice-checker', 'summariser'],
  },
  {
    id: 'job_notes',
    title: 'Note filing',
    profile: 'note-taker',
    outcome: 'a note filed in the client’s own notes tool',
    description: 'The text filed as a note through a connection to the client’s tool server (MCP).',
    price_fils: 1_500,
    ar: {
      title: 'حفظ الملاحظات',
      outcome: 'ملاحظة محفوظة في أداة الملاحظات الخاصة بالعميل',
      description: 'النص محفوظ كملاحظة عبر اتصال بخادم أدوات العميل (MCP).',
    },
    agents: ['note-taker'],
  },
  {
    id: 'job_team_brief',
    title: 'Team brief',
    profile: 'team-lead',
    outcome: 'a brief made by a team: a summary and the facts, each by its own agent',
    description:
      'The team lead delegates the summary and the extraction to its members through the rental and merges their signed results.',
    price_fils: 10_000,
    ar: {
      title: 'موجز فريق',
      outcome: 'موجز يعدّه فريق: ملخص والحقائق، كلٌّ من وكيله',
      description: 'يوزّع قائد الفريق الملخص والاستخراج على أعضائه عبر خدمة التأجير ويدمج نتائجهم الموقّعة.',
    },
    agents: ['team-lead'],
  },
]

/** The built-in agents' display names and descriptions in Arabic, by the agents service's id. */
export const DEMO_AGENTS_AR: Record<string, { name: string; description: string }> = {
  summariser: {
    name: 'الملخِّص',
    description: 'ملخص استخلاصي: يقيّم الجمل بتكرار كلماتها ذات المعنى ويحتفظ بأفضلها بترتيبها الأصلي.',
  },
  extractor: {
    name: 'مستخرج البيانات',
    description:
      'يقرأ نص الرسائل ويعيد العناوين والتواريخ والمبالغ بعملاتها وأرقام الآيبان (مدققة بـ mod-97) التي يجدها.',
  },
  'invoice-checker': {
    name: 'مدقق الفواتير',
    description:
      'يقرأ بنود الفاتورة (الكمية × سعر الوحدة)، ويعيد حساب المجموع الفرعي والضريبة (النسبة المذكورة، وإلا 5٪) والإجمالي، ويبلغ عن كل اختلاف.',
  },
  'note-taker': {
    name: 'كاتب الملاحظات',
    description:
      'يحفظ النص كملاحظة في خادم أدوات الملاحظات الخاص بالعميل عبر مسار الاتصال في خدمة التأجير، وقد تنتظر سياسة العميل موافقة على ذلك.',
  },
  'team-lead': {
    name: 'قائد الفريق',
    description:
      'يقود فريقًا: يطلب من الملخِّص ومستخرج البيانات عبر خدمة التأجير (كل خطوة مأذونة وموثّقة بإيصال) ويدمج نتائجهم الموقّعة في موجز.',
  },
}
